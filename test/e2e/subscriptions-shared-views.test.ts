import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCapacityFeed } from '../../services/live/capacity-feed.service.js';
import { setupBookable, type BookingFixture } from '../support/booking-fixtures.js';
import { book, slotOf } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { CAPACITY_SUBSCRIPTION, subscribe, untilLive } from '../support/live.js';

/** A capacity event for a slot of the resource, as the relay publishes it (and the Redis event target parses it: one object for every subscriber). */
const slotEvent = (f: BookingFixture, capacityLeft: number) => ({
  scope: 'slot',
  version: Date.now() * 1000,
  resourceId: f.resourceUuid,
  timeslotId: f.timeslotUuid,
  appointmentId: null,
  productId: null,
  kind: 'models.Bookable',
  start: f.slot.from,
  end: f.slot.to,
  capacity: 3,
  capacityLeft,
});

/** The harness's capacity subscription with another timeFormat (asListingChange then reads it as start/end). */
const FORMATTED = (pattern: string) => CAPACITY_SUBSCRIPTION.replace(`timeFormat: "yyyy-MM-dd'T'HH:mm:ssxxx"`, `timeFormat: "${pattern}"`);

describe('live capacity: subscribers of one kind share the views of a change', () => {
  let app: TestApp;
  let f: BookingFixture;

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
    f = await setupBookable(app, { capacity: 3 });
  }, 60_000);
  afterAll(async () => app?.close());

  it('hands subscriptions with the same arguments the same items, and others their own', async () => {
    const now = app.clock.now();
    const [a, b] = [await openCapacityFeed(app.context(), { refs: [f.resourceUuid] }), await openCapacityFeed(app.context(), { refs: [f.resourceUuid] })];
    const otherFormat = await openCapacityFeed(app.context(), { refs: [f.resourceUuid], timeFormat: 'HH:mm' });
    const later = await openCapacityFeed(app.context(), { refs: [f.resourceUuid], from: '2099-01-01T00:00' });
    const payload = slotEvent(f, 2);

    const seenByA = a.viewsOf(payload, now);
    expect(seenByA).toHaveLength(1);
    expect(seenByA[0]!.value.bookable).toMatchObject({ capacity_left: 2, timeslot_uuid: f.timeslotUuid });
    // The same array, items and views: built once for both.
    expect(b.viewsOf(payload, now)).toBe(seenByA);
    // Another time format is another kind of subscriber: its own views, formatted its way.
    const seenByOther = otherFormat.viewsOf(payload, now);
    expect(seenByOther).not.toBe(seenByA);
    expect(seenByOther[0]!.value.bookable!.formattedStart).toMatch(/^\d\d:\d\d$/);
    expect(seenByA[0]!.value.bookable!.formattedStart).not.toMatch(/^\d\d:\d\d$/);
    // A window that leaves the slot out sees nothing of it.
    expect(later.viewsOf(payload, now)).toEqual([]);
    // The next change is another message: new views, with its numbers.
    const next = slotEvent(f, 1);
    expect(a.viewsOf(next, now)).not.toBe(seenByA);
    expect(b.viewsOf(next, now)[0]!.value.bookable!.capacity_left).toBe(1);
  });

  it('delivers every subscriber its own formatting when a booking reaches several kinds at once', async () => {
    const patterns = ["yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm", 'HH:mm'];
    const subs = patterns.map((pattern) => subscribe(app.baseUrl, FORMATTED(pattern), { refs: [f.resourceUuid] }, { field: 'capacityChanged' }));
    try {
      for (const sub of subs) await untilLive(sub, app, f.resourceUuid);
      const after = subs.map((sub) => sub.received.length);
      const slot = slotOf(f, 1);
      expect((await book(app.anonymous, f, { start: slot.from, end: slot.to })).status).toBe(201);
      const seen = await Promise.all(
        subs.map((sub, i) => sub.waitFor((item) => item.timeslot_uuid === f.timeslotUuid && item.capacity_left === 2, { after: after[i] })),
      );
      // The feed's start formatted by each subscriber's own pattern (the listing shape reads formattedStart as start).
      expect(seen[0]!.item.start).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d$/);
      expect(seen[1]!.item.start).toBe(seen[0]!.item.start);
      expect(seen[2]!.item.start).toBe(seen[0]!.item.start.slice(11));
    } finally {
      await Promise.all(subs.map((sub) => sub.close()));
    }
  });
});
