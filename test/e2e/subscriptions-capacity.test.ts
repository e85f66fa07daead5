import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Appointment } from '../../services/appointments/appointment.entity.js';
import { announceCapacity } from '../../services/appointments/capacity-events.js';
import { inTransaction } from '../../services/kernel/context.js';
import { notifyOutbox } from '../../services/outbox/outbox.service.js';
import { type BookingFixture, setupBookable } from '../support/booking-fixtures.js';
import { book, reserve } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { apiClient, type ApiClient } from '../support/http.js';
import {
  CAPACITY_SUBSCRIPTION,
  type ChildGateway,
  leftShown,
  listedAt,
  type LiveSubscription,
  startChildGateway,
  subscribe,
  untilLive,
} from '../support/live.js';

describe('live capacity across processes: subscribe on gateway A, book on gateway B, expire in the worker', () => {
  let app: TestApp;
  let gatewayB: ChildGateway;
  let onB: ApiClient;
  let f: BookingFixture;
  let sub: LiveSubscription;

  beforeAll(async () => {
    // The relay polls only every 30 s here: events must arrive through LISTEN/NOTIFY on commit. The hold sweep runs every
    // second: suites running in parallel share the test database, so another suite's relay may claim the expiry job and
    // queue it under its own queue prefix; the sweep is the worker's own way to expire such a hold anyway.
    app = await startTestApp({ worker: { relayPollMs: 30_000, sweepMs: 1000 } });
    // Holds placed by gateway B last 3 seconds; the worker (in this process, real time) expires them.
    gatewayB = await startChildGateway(app, { HOLD_MINUTES: '0.05' });
    onB = apiClient(gatewayB.baseUrl);
    f = await setupBookable(app, { capacity: 2 });
    sub = subscribe(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [f.resourceUuid] }, { field: 'capacityChanged' });
    await untilLive(sub, app, f.resourceUuid);
  }, 60_000);

  afterAll(async () => {
    await sub?.close();
    await gatewayB?.stop();
    await app?.close();
  });

  it('each change arrives well under a second after the request, with the capacity_left upcoming_bookables gives', async () => {
    const slotStart = f.slot.from;
    const isSlot = (item: any) => Date.parse(item.start) === Date.parse(slotStart);
    const before = await listedAt(onB, f.resourceUuid, slotStart);
    expect(before).toMatchObject({ kind: 'models.Bookable', capacity: 2, capacity_left: 2 });

    // Waits name the value they expect: several workers' relays may publish the rows of one transaction in any order,
    // and an item may repeat a value (see README); the gateway drops only values older than one already delivered.
    // 1. Gateway B holds a place: the Bookable becomes a LotAppointment with 1 place left.
    let after = sub.received.length;
    const held = await reserve(onB, f);
    expect(held.status).toBe(200);
    const returned = Date.now();
    const appointmentUuid = held.body.participation.appointment_uuid;
    const first = await sub.waitFor((item) => isSlot(item) && item.capacity_left === 1, { after });
    expect(first.at - returned).toBeLessThan(1000);
    expect(first.item).toEqual({
      scope: 'slot',
      resource_uuid: f.resourceUuid,
      timeslot_uuid: f.timeslotUuid,
      appointment_uuid: appointmentUuid,
      product_uuid: f.productUuid,
      kind: 'models.LotAppointment',
      start: expect.stringMatching(/^\d{4}-\d\d-\d\dT09:00:00\+0[12]:00$/),
      end: expect.stringMatching(/T09:30:00\+0[12]:00$/),
      capacity: 2,
      capacity_left: 1,
    });
    const listed = await listedAt(onB, f.resourceUuid, slotStart);
    expect(listed).toMatchObject({ appointment_uuid: appointmentUuid, capacity: 2, capacity_left: 1, start: first.item.start, end: first.item.end });

    // 2. The consumer completes the hold on gateway B: still 1 left, announced again.
    after = sub.received.length;
    const booked = await book(onB, f, { timeslot_uuid: appointmentUuid, placeholder_id: held.body.participation.customer_uuid });
    expect(booked.status).toBe(201);
    const second = await sub.waitFor((item) => isSlot(item) && item.capacity_left === 1, { after });
    expect(second.item).toMatchObject({ appointment_uuid: appointmentUuid, capacity_left: 1 });
    expect(leftShown(await listedAt(onB, f.resourceUuid, slotStart))).toBe(1);

    // 3. Another consumer holds the last place: 0 left, and the slot is no longer listed.
    after = sub.received.length;
    const lastHold = await reserve(onB, f, { appointment_uuid: appointmentUuid, timeslot_uuid: undefined });
    expect(lastHold.status).toBe(200);
    const third = await sub.waitFor((item) => isSlot(item) && item.capacity_left === 0, { after });
    expect(third.item).toMatchObject({ appointment_uuid: appointmentUuid, capacity: 2, capacity_left: 0 });
    expect(await listedAt(onB, f.resourceUuid, slotStart)).toBeUndefined();

    // 4. Nobody completes it: the worker's hold expiry frees the place (3 s hold on gateway B).
    after = sub.received.length;
    const expired = await sub.waitFor((item) => isSlot(item) && item.capacity_left === 1, { after, timeoutMs: 20_000 });
    expect(expired.item).toMatchObject({ appointment_uuid: appointmentUuid, capacity_left: 1 });
    expect(leftShown(await listedAt(onB, f.resourceUuid, slotStart))).toBe(1);
    expect(leftShown(await listedAt(apiClient(app.baseUrl), f.resourceUuid, slotStart))).toBe(1);

    // 5. The booked consumer cancels with the link (on gateway B): both places are free.
    after = sub.received.length;
    const cancelled = await onB.post(new URL(booked.body.createdAppointment.cancelLink).pathname);
    expect(cancelled.status).toBe(200);
    const fifth = await sub.waitFor((item) => isSlot(item) && item.capacity_left === 2, { after });
    expect(fifth.item).toMatchObject({ appointment_uuid: appointmentUuid, capacity_left: 2 });
    expect(leftShown(await listedAt(onB, f.resourceUuid, slotStart))).toBe(2);

    // Nothing else about this slot arrived in between (probes are another slot); repeats of one value may be coalesced.
    const values = sub.received.filter((r) => isSlot(r.item)).map((r) => r.item.capacity_left);
    expect(values.filter((value, i) => value !== values[i - 1])).toEqual([1, 0, 1, 2]);
    expect(sub.errors).toEqual([]);
  }, 60_000);

  it('a change that rolls back publishes nothing; the same change committed does', async () => {
    const ctx = app.context();
    const appointment = await ctx.em.findOneOrFail(Appointment, { timeslot: f.timeslotUuid, start: new Date(f.slot.from) });
    const isSlot = (item: any) => item.appointment_uuid === appointment.id;
    // A repeat of the previous test's last change may still be on its way (coalesced, it follows one window later).
    await new Promise((resolve) => setTimeout(resolve, app.config.liveCoalesceMs + 200));
    let after = sub.received.length;
    await expect(
      inTransaction(ctx, async (tx) => {
        await announceCapacity(tx, appointment);
        await notifyOutbox(tx.em);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(sub.received.slice(after).filter((r) => isSlot(r.item))).toEqual([]);

    after = sub.received.length;
    await inTransaction(app.context(), async (tx) => {
      await announceCapacity(tx, appointment);
      await notifyOutbox(tx.em);
    });
    expect((await sub.waitFor(isSlot, { after })).item.capacity_left).toBe(2);
  });
});
