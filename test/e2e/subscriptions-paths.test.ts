import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BookingFixture, setupBookable } from '../support/booking-fixtures.js';
import { addTimeslot, providerPath, reserve, sql } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { type ApiClient, unique } from '../support/http.js';
import { CAPACITY_SUBSCRIPTION, leftShown, listedAt, type LiveSubscription, subscribe, untilLive } from '../support/live.js';
import { enc } from '../support/offerings-fixtures.js';
import { addParticipation, createCustomer, type SchedulingFixture } from '../support/scheduling-fixtures.js';

/** `YYYY-MM-DD` of the fixture's timeslot day (local wall-clock times of that day are used below). */
const dayOf = (f: BookingFixture) => new Date(f.slot.from).toISOString().slice(0, 10);
const at = (item: any, instant: string) => Date.parse(item.start) === Date.parse(instant);

describe('live capacity: every path that changes capacity publishes', () => {
  let app: TestApp;
  let pub: ApiClient;
  let f: BookingFixture;
  let crm: SchedulingFixture;
  let sub: LiveSubscription;
  let P: string;

  /** Waits for the next items (after the ones received so far) for which `match` holds, `count` of them. */
  async function next(action: () => Promise<unknown>, match: (item: any) => boolean, count = 1): Promise<any[]> {
    const after = sub.received.length;
    await action();
    const found: any[] = [];
    while (found.length < count) {
      const r = await sub.waitFor((item) => match(item) && !found.includes(item), { after });
      found.push(r.item);
    }
    return found;
  }

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
    pub = app.anonymous;
    f = await setupBookable(app, { capacity: 3 });
    P = providerPath(f);
    crm = { ...f, key: '', base: P } as unknown as SchedulingFixture;
    sub = subscribe(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [f.resourceRef] }, { field: 'capacityChanged' });
    await untilLive(sub, app, f.resourceUuid);
  }, 60_000);

  afterAll(async () => {
    await sub?.close();
    await app?.close();
  });

  it('CRM appointment create, participation create and update, appointment cancel', async () => {
    const reference = `appointment-${unique()}@test`;
    const start = `${dayOf(f)}T12:00`;
    const [created] = await next(
      () => f.api.post(`${P}/appointments`, { reference, start, end: `${dayOf(f)}T13:00`, resourceReference: f.resourceRef, productReference: f.productRef, capacity: 2, acceptBookings: true }),
      (item) => item.kind === 'models.LotAppointment' && item.start.includes('T12:00'),
    );
    expect(created).toMatchObject({ capacity: 2, capacity_left: 2, timeslot_uuid: null, product_uuid: f.productUuid });
    expect(leftShown(await listedAt(pub, f.resourceUuid, created.start))).toBe(2);
    const isIt = (item: any) => item.appointment_uuid === created.appointment_uuid;

    let participation!: Awaited<ReturnType<typeof addParticipation>>;
    const [added] = await next(async () => {
      participation = await addParticipation(crm, reference, { state: 'BOOKED', query: 'sendMails=false' });
      expect(participation.res.status).toBe(201);
    }, isIt);
    expect(added.capacity_left).toBe(1);
    expect(leftShown(await listedAt(pub, f.resourceUuid, created.start))).toBe(1);

    const [updated] = await next(async () => {
      const res = await f.api.post(`${P}/participations/${enc(participation.reference)}?sendMails=false`, { state: 'CANCELED' });
      expect(res.status).toBe(200);
    }, isIt);
    expect(updated.capacity_left).toBe(2);

    const [cancelled] = await next(async () => {
      const res = await f.api.delete(`${P}/appointments`, { appointmentReference: reference });
      expect(res.status).toBeLessThan(300);
    }, isIt);
    expect(cancelled).toMatchObject({ capacity: 2, capacity_left: 0 });
    expect(await listedAt(pub, f.resourceUuid, created.start)).toBeUndefined();
  });

  it('silent delete of an appointment made from a timeslot frees the slot: a Bookable with the default capacity again', async () => {
    const slot = { from: new Date(Date.parse(f.slot.from) + 30 * 60_000).toISOString(), to: new Date(Date.parse(f.slot.from) + 60 * 60_000).toISOString() };
    const [held] = await next(async () => expect((await reserve(pub, f, slot)).status).toBe(200), (item) => at(item, slot.from));
    expect(held).toMatchObject({ kind: 'models.LotAppointment', capacity_left: 2 });
    const [{ reference }] = await sql<{ reference: string }>(app, 'select reference from appointment where id = ?', [held.appointment_uuid]);

    const [freed] = await next(async () => {
      const res = await f.api.delete(`${P}/appointments/withoutNotification`, { appointmentReference: reference });
      expect(res.status).toBeLessThan(300);
    }, (item) => at(item, slot.from) && item.kind === 'models.Bookable');
    expect(freed).toMatchObject({ kind: 'models.Bookable', appointment_uuid: null, timeslot_uuid: f.timeslotUuid, capacity: 3, capacity_left: 3 });
    expect(await listedAt(pub, f.resourceUuid, slot.from)).toMatchObject({ kind: 'models.Bookable', capacity_left: 3 });
  });

  it('customer deletion with ignoreFutureAppointments frees the places', async () => {
    const reference = `appointment-${unique()}@test`;
    const [created] = await next(
      () => f.api.post(`${P}/appointments`, { reference, start: `${dayOf(f)}T17:00`, end: `${dayOf(f)}T18:00`, resourceReference: f.resourceRef, productReference: f.productRef, capacity: 4, acceptBookings: true }),
      (item) => item.start.includes('T17:00'),
    );
    const customerReference = await createCustomer(crm);
    const isIt = (item: any) => item.appointment_uuid === created.appointment_uuid;
    const [booked] = await next(async () => expect((await addParticipation(crm, reference, { customerReference, query: 'sendMails=false' })).res.status).toBe(201), isIt);
    expect(booked.capacity_left).toBe(3);
    const [freed] = await next(async () => {
      const res = await f.api.delete(`${P}/customers/${enc(customerReference)}?ignoreFutureAppointments=true`);
      expect(res.status).toBeLessThan(300);
    }, isIt);
    expect(freed.capacity_left).toBe(4);
  });

  it('timeslot create, close, reopen, move and delete: one event per slot, bounded by the window', async () => {
    const reference = `timeslot-${unique()}@test`;
    const day = dayOf(f);
    const inSlots = (hours: string[]) => (item: any) => item.timeslot_uuid !== f.timeslotUuid && hours.some((h) => item.start.includes(`T${h}:00`));
    const created = await next(
      () => addTimeslot(f, { reference, start: `${day}T14:00`, end: `${day}T15:00`, defaultCapacity: 5 }),
      inSlots(['14:00', '14:30']),
      2,
    );
    expect(created.map((item) => [item.kind, item.capacity, item.capacity_left])).toEqual([
      ['models.Bookable', 5, 5],
      ['models.Bookable', 5, 5],
    ]);
    const timeslotUuid = created[0].timeslot_uuid;
    expect(leftShown(await listedAt(pub, f.resourceUuid, created[1].start))).toBe(5);
    const put = async (body: Record<string, unknown>) => expect((await f.api.put(`${P}/timeslots/${enc(reference)}`, body)).status).toBe(200);

    const closed = await next(() => put({ state: 'CREATED' }), inSlots(['14:00', '14:30']), 2);
    expect(closed.map((item) => item.capacity_left)).toEqual([0, 0]);
    expect(await listedAt(pub, f.resourceUuid, created[0].start)).toBeUndefined();

    const reopened = await next(() => put({ state: 'BOOKABLE', defaultCapacity: 2 }), inSlots(['14:00', '14:30']), 2);
    expect(reopened.map((item) => [item.capacity, item.capacity_left])).toEqual([
      [2, 2],
      [2, 2],
    ]);

    // Moving the timeslot to 15:00-16:00: 14:00 and 14:30 are gone, 15:00 and 15:30 appear.
    const moved = await next(() => put({ start: `${day}T15:00`, end: `${day}T16:00` }), inSlots(['14:00', '14:30', '15:00', '15:30']), 4);
    const byHour = Object.fromEntries(moved.map((item) => [item.start.slice(11, 16), item.capacity_left]));
    expect(byHour).toEqual({ '14:00': 0, '14:30': 0, '15:00': 2, '15:30': 2 });
    expect(moved.every((item) => item.timeslot_uuid === timeslotUuid)).toBe(true);

    const deleted = await next(async () => expect((await f.api.delete(`${P}/timeslots/${enc(reference)}`)).status).toBeLessThan(300), inSlots(['15:00', '15:30']), 2);
    expect(deleted.map((item) => item.capacity_left)).toEqual([0, 0]);
    expect(await listedAt(pub, f.resourceUuid, moved.find((item) => item.start.includes('T15:00')).start)).toBeUndefined();
  });

  it('a booking that leaves a neighbour no room for the product’s follow-up time announces that neighbour with 0, as upcoming_bookables drops it', async () => {
    const own = await setupBookable(app, { capacity: 2, slots: 4, product: { followUpTimeMinutes: 30 } });
    const mine = subscribe(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [own.resourceUuid] }, { field: 'capacityChanged' });
    try {
      await untilLive(mine, app, own.resourceUuid);
      const slot = (i: number) => ({ from: new Date(Date.parse(own.slot.from) + i * 30 * 60_000).toISOString(), to: new Date(Date.parse(own.slot.from) + (i + 1) * 30 * 60_000).toISOString() });
      // 09:00 is listed (its follow-up time 09:30-10:00 is free); the last slot is not (no room after it in the timeslot).
      expect(leftShown(await listedAt(pub, own.resourceUuid, slot(0).from))).toBe(2);
      const after = mine.received.length;
      expect((await reserve(pub, own, slot(1))).status).toBe(200);
      const neighbour = await mine.waitFor((item) => at(item, slot(0).from), { after });
      expect(neighbour.item).toMatchObject({ kind: 'models.Bookable', capacity: 2, capacity_left: 0 });
      expect(await listedAt(pub, own.resourceUuid, slot(0).from)).toBeUndefined();
      const held = await mine.waitFor((item) => at(item, slot(1).from), { after });
      expect(held.item).toMatchObject({ kind: 'models.LotAppointment', capacity_left: 1 });
      expect(leftShown(await listedAt(pub, own.resourceUuid, slot(1).from))).toBe(1);
      const later = await mine.waitFor((item) => at(item, slot(2).from), { after });
      expect(later.item.capacity_left).toBe(leftShown(await listedAt(pub, own.resourceUuid, slot(2).from)));
    } finally {
      await mine.close();
    }
  });

  it('resource deletion with ignoreFutureAppointments: its appointments and timeslot slots go to 0', async () => {
    const own = await setupBookable(app, { capacity: 2, slots: 2 });
    const mine = subscribe(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [own.resourceUuid] }, { field: 'capacityChanged' });
    try {
      await untilLive(mine, app, own.resourceUuid);
      expect((await reserve(pub, own)).status).toBe(200);
      const held = await mine.waitFor((item) => at(item, own.slot.from) && item.capacity_left === 1);
      const after = mine.received.length;
      const res = await own.api.delete(`${providerPath(own)}/resources/${enc(own.resourceRef)}?ignoreFutureAppointments=true`);
      expect(res.status).toBeLessThan(300);
      const lot = await mine.waitFor((item) => item.appointment_uuid === held.item.appointment_uuid && item.capacity_left === 0, { after });
      expect(lot.item.capacity_left).toBe(0);
      const second = new Date(Date.parse(own.slot.from) + 30 * 60_000).toISOString();
      const bookable = await mine.waitFor((item) => at(item, second) && item.capacity_left === 0, { after });
      expect(bookable.item).toMatchObject({ kind: 'models.Bookable', capacity_left: 0 });
    } finally {
      await mine.close();
    }
  });
});
