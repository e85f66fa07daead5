import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setupBookable } from '../support/booking-fixtures.js';
import { reserve } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import type { ApiClient } from '../support/http.js';

const RESERVE = `mutation ($ref: String!, $input: ReserveAppointmentInput!) {
  reserveAppointment(ref: $ref, input: $input) { participation { uuid from to state } }
}`;

/** `2026-05-04T07:00:00.000Z` → `2026-05-04T07:00:00` (the same wall time without offset). */
const withoutOffset = (iso: string): string => iso.slice(0, 19);

describe('booking flow: inputs as people and CRMs write them', () => {
  let app: TestApp;
  let pub: ApiClient;

  beforeAll(async () => {
    app = await startTestApp();
    pub = app.anonymous;
  });
  afterEach(() => app.clock.reset());
  afterAll(async () => app?.close());

  describe('reserve_appointment from/to', () => {
    it('reads from/to without offset as UTC (REST)', async () => {
      const f = await setupBookable(app);
      const res = await reserve(pub, f, { from: withoutOffset(f.slot.from), to: withoutOffset(f.slot.to) });
      expect(res.status).toBe(200);
      expect(new Date(res.body.participation.from).toISOString()).toBe(f.slot.from);
      expect(new Date(res.body.participation.to).toISOString()).toBe(f.slot.to);
    });

    it('takes from/to with an offset as given (REST)', async () => {
      const f = await setupBookable(app);
      const shift = (iso: string) => new Date(new Date(iso).getTime() + 2 * 3_600_000).toISOString().slice(0, 19) + '+02:00';
      const res = await reserve(pub, f, { from: shift(f.slot.from), to: shift(f.slot.to) });
      expect(res.status).toBe(200);
      expect(new Date(res.body.participation.from).toISOString()).toBe(f.slot.from);
    });

    it('reads from/to without offset as UTC (GraphQL)', async () => {
      const f = await setupBookable(app);
      const input = { timeslotUuid: f.timeslotUuid, productUuid: f.productUuid, from: withoutOffset(f.slot.from), to: withoutOffset(f.slot.to) };
      const res = await pub.graphql(RESERVE, { ref: f.resourceUuid, input });
      expect(res.body.errors).toBeUndefined();
      expect(new Date(res.body.data.reserveAppointment.participation.from).toISOString()).toBe(f.slot.from);
    });
  });
});
