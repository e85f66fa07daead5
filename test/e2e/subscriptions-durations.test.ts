import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupBookable } from '../support/booking-fixtures.js';
import { book, slotOf } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { CAPACITY_SUBSCRIPTION, leftShown, listedAt, subscribe, untilLive } from '../support/live.js';

describe('live capacity: product durations filter only a chosen product, as in upcoming_bookables', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
  }, 60_000);
  afterAll(async () => app?.close());

  it('a Bookable no product fits by duration is still announced, with the places the listing shows', async () => {
    // Raster 30, the only product needs 60 minutes and keeps 15 minutes before and after free.
    const f = await setupBookable(app, { capacity: 1, slots: 4, product: { minDuration: 60, leadTimeMinutes: 15, followUpTimeMinutes: 15 } });
    const sub = subscribe(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [f.resourceUuid] }, { field: 'capacityChanged' });
    try {
      await untilLive(sub, app, f.resourceUuid);
      const neighbour = slotOf(f, 1).from;
      expect(leftShown(await listedAt(app.anonymous, f.resourceUuid, neighbour))).toBe(1);
      const after = sub.received.length;
      // A booking that names no product takes the slot's only product, as listed; its lead time closes slot 1.
      const second = slotOf(f, 2);
      const booked = await book(app.anonymous, f, { product_uuid: undefined, start: second.from, end: second.to });
      expect(booked.status).toBe(201);
      const event = await sub.waitFor((item) => item.kind === 'models.Bookable' && Date.parse(item.start) === Date.parse(neighbour), { after });
      expect(event.item).toMatchObject({ timeslot_uuid: f.timeslotUuid, appointment_uuid: null, capacity_left: 0 });
      expect(leftShown(await listedAt(app.anonymous, f.resourceUuid, neighbour))).toBe(0);
    } finally {
      await sub.close();
    }
  });
});
