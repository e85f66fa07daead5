import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setupBookable } from '../support/booking-fixtures.js';
import {
  addProduct,
  addResource,
  addTimeslot,
  appointmentsOfTimeslot,
  book,
  bookablesOf,
  participationsOf,
  reserve,
  resourceRefs,
  setChannel,
  slotOf,
  sql,
  upcoming,
  updateResource,
} from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import type { ApiClient } from '../support/http.js';

const MINUTE = 60_000;
const UUID = expect.stringMatching(/^[0-9a-f-]{36}$/);
const SLOT_TAKEN = { 'api-info': { version: '1' }, errors: [{ errorCode: '201', message: 'Das überlappt mit einem anderen Termin.' }] };

describe('booking flow: POST /rest/1/resources/:ref/reserve_appointment', () => {
  let app: TestApp;
  let pub: ApiClient;

  beforeAll(async () => {
    app = await startTestApp();
    pub = app.anonymous;
  });
  afterEach(() => app.clock.reset());
  afterAll(async () => app?.close());

  it('holds a place: 200 with exactly the documented shape, state RESERVED, capacity reduced', async () => {
    const f = await setupBookable(app, { capacity: 3 });
    const res = await reserve(pub, f);
    expect(res.status).toBe(200);
    const participation = res.body.participation;
    const from = bookablesOf((await upcoming(pub, f.resourceUuid)).body)[0].start;
    const to = bookablesOf((await upcoming(pub, f.resourceUuid)).body)[0].end;
    expect(res.body).toEqual({
      'api-info': { version: '1' },
      participation: {
        uuid: UUID,
        appointment_uuid: UUID,
        timeslot_uuid: f.timeslotUuid,
        resource_uuid: f.resourceUuid,
        product_uuid: f.productUuid,
        from,
        to,
        appointment_capacity: 3,
        appointment_capacity_left: 2,
        customer_uuid: UUID,
        customer_mobile: null,
        customer_fullName: null,
        customer_email: null,
        customer_note: null,
        state: 'RESERVED',
        formatedAddress: null,
        messages: [],
      },
      appointments: [
        {
          uuid: participation.appointment_uuid,
          kind: 'models.LotAppointment',
          product_id: f.productUuid,
          product_name: 'Viewing',
          resource_id: f.resourceUuid,
          from,
          to,
          state: 'ACTIVE',
          capacity: 3,
          capacity_left: 2,
          customers: [
            {
              customer_placeholder_id: participation.customer_uuid,
              customer_uuid: participation.customer_uuid,
              participationState: 'RESERVED',
              participation_id: participation.uuid,
            },
          ],
        },
      ],
    });
    expect(new Date(from).toISOString()).toBe(f.slot.from);

    const [row] = await participationsOf(app, participation.appointment_uuid);
    expect(row).toMatchObject({ id: participation.uuid, state: 'RESERVED', customer_id: null });
    expect(new Date(row!.expires_at!).getTime() - app.clock.now().getTime()).toBeGreaterThan(2.9 * MINUTE);
    expect(new Date(row!.expires_at!).getTime() - app.clock.now().getTime()).toBeLessThanOrEqual(3 * MINUTE);
    // The expiry job leaves through the outbox, due when the hold ends.
    const jobs = await sql<{ topic: string; run_at: Date }>(app, `select topic, run_at from outbox_message where kind = 'job' and payload->>'participationId' = ?`, [participation.uuid]);
    expect(jobs).toEqual([{ topic: 'hold-expiry', run_at: row!.expires_at }]);
    expect(bookablesOf((await upcoming(pub, f.resourceUuid)).body)[0]).toMatchObject({ kind: 'models.LotAppointment', capacity_left: 2 });
  });

  it('accepts the three reference forms', async () => {
    const f = await setupBookable(app, { capacity: 5 });
    const refs = resourceRefs(f);
    for (const ref of [refs.uuid, refs.full, refs.short]) {
      const res = await pub.post(`/rest/1/resources/${encodeURIComponent(ref)}/reserve_appointment`, {
        timeslot_uuid: f.timeslotUuid,
        product_uuid: f.productUuid,
        from: f.slot.from,
        to: f.slot.to,
      });
      expect(res.status).toBe(200);
    }
    expect((await reserve(pub, { ...f, resourceUuid: 'unknown@test' })).status).toBe(404);
  });

  it('turns the Bookable into one LotAppointment with the timeslot defaults; later reserves share it via timeslot_uuid or appointment_uuid', async () => {
    const f = await setupBookable(app);
    const day = new Date(new Date(f.slot.from).getTime() + 86_400_000).toISOString().slice(0, 10);
    const address = { city: 'Köln', zip: '50667', street: 'Domkloster', number: '4', country: 'DE' };
    const timeslotUuid = await addTimeslot(f, { start: `${day}T14:00`, end: `${day}T15:00`, defaultCapacity: 4, address });
    const slot = { from: new Date(`${day}T13:00:00Z`).toISOString(), to: new Date(`${day}T13:30:00Z`).toISOString() };
    // 14:00 Berlin is 13:00Z in winter and 12:00Z in summer.
    const start = bookablesOf((await upcoming(pub, f.resourceUuid)).body).find((b) => b.timeslot_uuid === timeslotUuid)!.start;
    slot.from = new Date(start).toISOString();
    slot.to = new Date(new Date(start).getTime() + 30 * MINUTE).toISOString();

    const first = await reserve(pub, f, { timeslot_uuid: timeslotUuid, ...slot });
    expect(first.status).toBe(200);
    expect(first.body.participation.formatedAddress).toBe('Domkloster 4, 50667 Köln');
    const appointmentUuid = first.body.participation.appointment_uuid;
    const second = await reserve(pub, f, { timeslot_uuid: timeslotUuid, ...slot });
    const third = await reserve(pub, f, { timeslot_uuid: null, appointment_uuid: appointmentUuid, ...slot });
    expect([second.status, third.status]).toEqual([200, 200]);
    expect(second.body.participation.appointment_uuid).toBe(appointmentUuid);
    expect(third.body.participation.appointment_uuid).toBe(appointmentUuid);
    expect(third.body.participation.appointment_capacity_left).toBe(1);

    const rows = await sql<{ id: string; capacity: number; accept_bookings: boolean; address: unknown; product_id: string; state: string }>(
      app,
      'select id, capacity, accept_bookings, address, product_id, state from appointment where timeslot_id = ?',
      [timeslotUuid],
    );
    expect(rows).toEqual([
      {
        id: appointmentUuid,
        capacity: 4,
        accept_bookings: true,
        address: { city: 'Köln', zip: '50667', street: 'Domkloster', number: '4', countryCode: 'DE' },
        product_id: f.productUuid,
        state: 'ACTIVE',
      },
    ]);
    expect((await participationsOf(app, appointmentUuid)).map((p) => p.state)).toEqual(['RESERVED', 'RESERVED', 'RESERVED']);
    // The CRM sees the new appointment with the three holds.
    const listed = (await f.api.get(`/crms/${f.crmId}/provider/${encodeURIComponent(f.providerRef)}/appointments`)).body.find(
      (a: { start: string }) => a.start === slot.from.replace('.000Z', 'Z'),
    );
    expect(listed).toMatchObject({ capacity: 4, acceptBookings: true, productReference: f.productRef, resourceReference: f.resourceRef });
  });

  it('books a slot of a resource named by the ref query parameter (merged resources), and only then', async () => {
    const f = await setupBookable(app);
    const second = await addResource(f);
    const day = f.slot.from.slice(0, 10);
    const timeslotUuid = await addTimeslot({ ...f, resourceRef: second.ref }, { start: `${day}T14:00`, end: `${day}T15:00` });
    const bookable = bookablesOf((await upcoming(pub, f.resourceUuid, `ref=${second.uuid}`)).body).find((b) => b.timeslot_uuid === timeslotUuid)!;
    const body = { timeslot_uuid: timeslotUuid, from: bookable.start, to: bookable.end };
    expect((await reserve(pub, f, body)).status).toBe(400);
    const merged = await reserve(pub, f, body, `ref=${encodeURIComponent(second.ref)}`);
    expect(merged.status).toBe(200);
    expect(merged.body.participation.resource_uuid).toBe(second.uuid);
    const consumer = await book(pub, f, { timeslot_uuid: timeslotUuid, start: bookable.start, end: bookable.end }, `ref=${second.uuid}`);
    expect(consumer.status).toBe(201);
    expect(consumer.body.createdAppointment).toMatchObject({ resource_uuid: second.uuid, resource_name: 'Second agent', capacity_left: 1 });
  });

  it('refuses with 412 errorCode 201 when the slot is full, and frees the place when a hold expires', async () => {
    const f = await setupBookable(app, { capacity: 2 });
    expect((await reserve(pub, f)).status).toBe(200);
    expect((await book(pub, f)).status).toBe(201);
    const full = await reserve(pub, f);
    expect(full.status).toBe(412);
    expect(full.body).toEqual(SLOT_TAKEN);
    const appointmentUuid = (await appointmentsOfTimeslot(app, f.timeslotUuid))[0]!.id;
    expect((await reserve(pub, f, { timeslot_uuid: null, appointment_uuid: appointmentUuid })).status).toBe(412);

    app.clock.advance(3 * MINUTE + 1000);
    const again = await reserve(pub, f, { timeslot_uuid: null, appointment_uuid: appointmentUuid });
    expect(again.status).toBe(200);
    expect(again.body.participation.appointment_capacity_left).toBe(0);
    expect(await appointmentsOfTimeslot(app, f.timeslotUuid)).toHaveLength(1);
  });

  it('lets only the holder book a held place', async () => {
    const f = await setupBookable(app, { capacity: 1 });
    const hold = await reserve(pub, f);
    const other = await book(pub, f);
    expect(other.status).toBe(412);
    expect(other.body).toEqual(SLOT_TAKEN);
    const own = await book(pub, f, { placeholder_id: hold.body.participation.customer_uuid });
    expect(own.status).toBe(201);
  });

  it('answers 400 naming the field for missing or invalid input, and books nothing', async () => {
    const f = await setupBookable(app);
    const cases: [Record<string, unknown>, string][] = [
      [{ product_uuid: undefined }, 'product_uuid is required'],
      [{ from: undefined }, 'from is required'],
      [{ to: undefined }, 'to is required'],
      [{ timeslot_uuid: undefined }, 'timeslot_uuid or appointment_uuid is required'],
      [{ product_uuid: 'not-a-uuid' }, 'product_uuid'],
      [{ from: 'tomorrow' }, 'from must be an ISO 8601 date-time'],
      [{ to: f.slot.from }, 'to must be after from'],
      [{ from: slotOf(f, 0).from, to: slotOf(f, 1).to }, 'one slot of the timeslot grid'],
      [{ from: new Date(new Date(f.slot.from).getTime() + 10 * MINUTE).toISOString(), to: new Date(new Date(f.slot.to).getTime() + 10 * MINUTE).toISOString() }, 'one slot'],
      [{ product_uuid: '00000000-0000-4000-8000-000000000000' }, 'product_uuid'],
      [{ timeslot_uuid: '00000000-0000-4000-8000-000000000000' }, 'timeslot_uuid'],
    ];
    for (const [body, message] of cases) {
      const res = await reserve(pub, f, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors[0].message).toContain(message);
    }
    const malformed = await pub.post(`/rest/1/resources/${f.resourceUuid}/reserve_appointment`, '{"from":', { 'content-type': 'application/json' });
    expect(malformed.status).toBe(400);
    expect(await appointmentsOfTimeslot(app, f.timeslotUuid)).toEqual([]);
  });

  it('refuses a slot that has started, a CREATED timeslot, an archived resource and an invisible channel', async () => {
    const f = await setupBookable(app);
    app.clock.set(new Date(new Date(f.slot.from).getTime() + MINUTE));
    expect((await reserve(pub, f)).status).toBe(400);
    app.clock.reset();

    await setChannel(f, 'RESOURCE_REFERENCE', { visible: false });
    expect((await reserve(pub, f, {}, 'channelKey=RESOURCE_REFERENCE')).status).toBe(400);
    expect((await reserve(pub, f, {}, 'channelKey=CALENDAR_PUBLIC')).status).toBe(200);

    await updateResource(f, f.resourceRef, { archived: true });
    expect((await reserve(pub, f)).status).toBe(400);
  });

  it('refuses a product whose minimum or maximum duration does not suit the raster, as upcoming_bookables does', async () => {
    const f = await setupBookable(app);
    const long = await addProduct(f, { minDuration: 60 });
    await updateResource(f, f.resourceRef, { products: [f.productRef, long.ref] });
    expect(bookablesOf((await upcoming(pub, f.resourceUuid)).body)[0].products).toEqual([{ uuid: f.productUuid, name: 'Viewing' }]);
    const res = await reserve(pub, f, { product_uuid: long.uuid });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toContain('product_uuid');
  });

  it('a timeslot with defaultAcceptBookings false: the first booking makes the appointment private', async () => {
    const f = await setupBookable(app, { acceptBookings: false, capacity: 3 });
    const first = await reserve(pub, f);
    expect(first.status).toBe(200);
    expect(first.body.appointments[0]).toMatchObject({ capacity: 3, capacity_left: 2 });
    // Further places only through the provider: the slot is no longer listed or bookable publicly.
    expect(bookablesOf((await upcoming(pub, f.resourceUuid)).body).map((b) => new Date(b.start).toISOString())).not.toContain(f.slot.from);
    expect((await reserve(pub, f)).body).toEqual(SLOT_TAKEN);
    expect((await book(pub, f, { placeholder_id: first.body.participation.customer_uuid })).status).toBe(201);
  });

  it('refuses a product the channel does not offer', async () => {
    const f = await setupBookable(app);
    const vip = await addProduct(f);
    await updateResource(f, f.resourceRef, { products: [f.productRef, vip.ref] });
    await setChannel(f, 'RESOURCE_EXCLUSIVE', { exclusiveProducts: [vip.ref] });
    expect((await reserve(pub, f, { product_uuid: vip.uuid })).status).toBe(400);
    expect((await reserve(pub, f, { product_uuid: vip.uuid }, 'channelKey=RESOURCE_EXCLUSIVE')).status).toBe(200);
  });
});
