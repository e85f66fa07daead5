import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setupBookable } from '../support/booking-fixtures.js';
import { addProduct, addTimeslot, book, bookablesOf, providerPath, slotOf, upcoming, updateResource } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import type { ApiClient } from '../support/http.js';

const DAY = 86_400_000;
const enc = encodeURIComponent;

/**
 * Extensions of upcoming_bookables: the window `from`/`to`, the bound on
 * `ref`, and the bookability rule with blocked periods (an appointment's
 * lead and follow-up time block its neighbours for every product).
 */
describe('booking flow: upcoming_bookables window, limits and blocked periods', () => {
  let app: TestApp;
  let pub: ApiClient;

  beforeAll(async () => {
    app = await startTestApp();
    pub = app.anonymous;
  });
  afterEach(() => app.clock.reset());
  afterAll(async () => app?.close());

  const local = (b: { formattedStart: string }) => b.formattedStart;
  const errorOf = (res: { body: { errors: { message: string }[] } }) => res.body.errors[0]!.message;

  describe('from and to', () => {
    it('list the slots starting in [from, to); without offset in the provider’s zone, with offset as given', async () => {
      app.clock.set('2027-05-01T08:00:00Z');
      const f = await setupBookable(app, { slots: 4 }); // 2027-05-08 09:00-11:00 Berlin (+02:00)
      await addTimeslot(f, { start: '2027-05-09T09:00', end: '2027-05-09T10:00' });
      await addTimeslot(f, { start: '2027-05-20T09:00', end: '2027-05-20T09:30' });

      const all = await upcoming(pub, f.resourceUuid);
      expect(bookablesOf(all.body)).toHaveLength(7);
      const day = await upcoming(pub, f.resourceUuid, `from=2027-05-09T00:00&to=2027-05-10T00:00`);
      expect(bookablesOf(day.body).map(local)).toEqual(['2027-05-09 09:00', '2027-05-09 09:30']);
      // 09:30+02:00 is 07:30Z: a slot starting exactly at `from` is in, one starting at `to` is out.
      const offset = await upcoming(pub, f.resourceUuid, `from=${enc('2027-05-08T09:30+02:00')}&to=${enc('2027-05-08T08:30:00Z')}`);
      expect(bookablesOf(offset.body).map(local)).toEqual(['2027-05-08 09:30', '2027-05-08 10:00']);
      // from alone: from + 366 days; to alone: from now.
      expect(bookablesOf((await upcoming(pub, f.resourceUuid, 'from=2027-05-09T09:30')).body).map(local)).toEqual(['2027-05-09 09:30', '2027-05-20 09:00']);
      expect(bookablesOf((await upcoming(pub, f.resourceUuid, 'to=2027-05-08T10:00')).body).map(local)).toEqual(['2027-05-08 09:00', '2027-05-08 09:30']);
      // Slots never come before now, whatever from says; an empty window answers 204.
      app.clock.set(new Date(Date.parse(f.slot.from) + 60 * 60_000 + 1));
      expect(bookablesOf((await upcoming(pub, f.resourceUuid, 'from=2027-01-01T00:00&to=2027-05-09T00:00')).body).map(local)).toEqual(['2027-05-08 10:30']);
      expect((await upcoming(pub, f.resourceUuid, 'from=2027-05-10T00:00&to=2027-05-11T00:00')).status).toBe(204);
    });

    it('refuse a bad value, to not after from, and a window longer than 366 days with 400 naming the parameter', async () => {
      const f = await setupBookable(app, { slots: 1 });
      const cases: [string, RegExp][] = [
        ['from=tomorrow', /^from must be an ISO 8601 date-time/],
        ['to=2027-02-30T10:00', /^to must be an ISO 8601 date-time/],
        ['from=2027-05-09T10:00&to=2027-05-09T10:00', /^to must be after from$/],
        ['from=2027-05-09T10:00&to=2027-05-09T09:00', /^to must be after from$/],
        ['from=2027-01-01T00:00&to=2028-01-03T00:00', /^to must lie at most 366 days after from$/],
        [`to=${new Date(Date.now() + 367 * DAY).toISOString().slice(0, 16)}`, /^to must lie at most 366 days after now$/],
      ];
      for (const [query, message] of cases) {
        const res = await upcoming(pub, f.resourceUuid, query);
        expect(res.status, query).toBe(400);
        expect(errorOf(res), query).toMatch(message);
      }
      // A window of exactly 366 days is fine.
      expect((await upcoming(pub, f.resourceUuid, 'from=2027-01-01T00:00&to=2028-01-02T00:00')).status).not.toBe(400);
    });

    it('work the same in the GraphQL query', async () => {
      app.clock.set('2027-05-01T08:00:00Z');
      const f = await setupBookable(app, { slots: 4 });
      const query = `query ($ref: String!, $from: String, $to: String) { upcomingBookables(ref: $ref, from: $from, to: $to) { groups { bookables { formattedStart } } } }`;
      const res = await pub.graphql(query, { ref: f.resourceUuid, from: '2027-05-08T09:30', to: '2027-05-08T10:30' });
      expect(res.body.data.upcomingBookables.groups[0].bookables.map(local)).toEqual(['2027-05-08 09:30', '2027-05-08 10:00']);
      const bad = await pub.graphql(query, { ref: f.resourceUuid, from: '2027-05-08T10:30', to: '2027-05-08T09:30' });
      expect(bad.body.errors![0].extensions.code).toBe('VALIDATION_FAILED');
      expect(bad.body.errors![0].message).toBe('to must be after from');
    });
  });

  it('merges at most 20 further resources (ref): more is a 400 naming ref', async () => {
    const f = await setupBookable(app, { slots: 1 });
    const refs = (n: number) => Array.from({ length: n }, () => `ref=${f.resourceUuid}`).join('&');
    const twenty = await upcoming(pub, f.resourceUuid, refs(20));
    expect(twenty.status).toBe(200);
    expect(bookablesOf(twenty.body)).toHaveLength(1);
    const more = await upcoming(pub, f.resourceUuid, refs(21));
    expect(more.status).toBe(400);
    expect(errorOf(more)).toBe('ref: at most 20 further resources per request, got 21');
  });

  it('a ref or prdRef PostgreSQL cannot store (NUL) names nothing: 404 in the path, skipped as extra ref, 400 as prdRef, never a 500', async () => {
    const f = await setupBookable(app, { slots: 1 });
    expect((await upcoming(pub, 'a\u0000b@test')).status).toBe(404);
    const extra = await upcoming(pub, f.resourceUuid, `ref=${enc('x\u0000')}`);
    expect(extra.status).toBe(200);
    expect(bookablesOf(extra.body).map((b) => b.resource_uuid)).toEqual([f.resourceUuid]);
    const product = await upcoming(pub, f.resourceUuid, `prdRef=${enc('p\u0000')}`);
    expect(product.status).toBe(400);
    expect(errorOf(product)).toMatch(/^prdRef: no product/);
  });

  describe('blocked periods', () => {
    it('a booking with lead and follow-up time blocks its neighbours for every product, not only for products with such times', async () => {
      const f = await setupBookable(app, { slots: 8, capacity: 1 }); // 09:00-13:00, raster 30
      const travel = await addProduct(f, { name: 'Travel', leadTimeMinutes: 30, followUpTimeMinutes: 30 });
      await updateResource(f, f.resourceRef, { products: [f.productRef, travel.ref] });
      const time = (b: { formattedStart: string }) => b.formattedStart.slice(11);
      // Book 11:00-11:30 with the travel product: blocked 10:30-12:00.
      expect((await book(pub, f, { start: slotOf(f, 4).from, end: slotOf(f, 4).to, product_uuid: travel.uuid })).status).toBe(201);
      const plain = await upcoming(pub, f.resourceUuid, `prdRef=${enc(f.productRef)}`);
      expect(bookablesOf(plain.body).map(time)).toEqual(['09:00', '09:30', '10:00', '12:00', '12:30']);
      const withTravel = await upcoming(pub, f.resourceUuid, `prdRef=${travel.uuid}`);
      // Travel needs its own 30 minutes before and after, inside the timeslot and clear of 10:30-12:00: only 09:30 (09:00-10:30).
      expect(bookablesOf(withTravel.body).map(time)).toEqual(['09:30']);
    });

    it('an appointment a CRM made (no timeslot) blocks by its product’s lead time too', async () => {
      const f = await setupBookable(app, { slots: 4 }); // 09:00-11:00
      const prep = await addProduct(f, { name: 'Prepared', leadTimeMinutes: 60 });
      const day = f.slot.from.slice(0, 10);
      const created = await f.api.post(`${providerPath(f)}/appointments`, {
        reference: `crm-${Date.now()}@test`,
        start: `${day}T10:30`,
        end: `${day}T11:00`,
        resourceReference: f.resourceRef,
        productReference: prep.ref,
        capacity: 1,
        acceptBookings: false,
      });
      expect(created.status).toBe(201);
      // Blocked 09:30-11:00: only 09:00 stays.
      expect(bookablesOf((await upcoming(pub, f.resourceUuid)).body).map((b) => b.formattedStart.slice(11))).toEqual(['09:00']);
    });
  });
});
