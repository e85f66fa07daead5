import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_EPOCH, type TestApp } from '../support/harness.js';
import { unique } from '../support/http.js';
import { setupProvider } from '../support/fixtures.js';
import { createProduct, createResource, createStaffUser, createUser, enc } from '../support/offerings-fixtures.js';
import {
  addParticipation,
  createAppointment,
  mailRowsOfAppointment,
  mailRowsOfAppointmentIds,
  RESOURCE_ADDRESS,
  setupScheduling,
  type SchedulingFixture,
  sql,
} from '../support/scheduling-fixtures.js';

const API_INFO = { version: '1' };

describe('scheduling: appointments (REST)', () => {
  let app: TestApp;
  let f: SchedulingFixture;

  beforeAll(async () => {
    app = await startTestApp({ clockAt: TEST_EPOCH });
    f = await setupScheduling(app);
  });
  afterAll(async () => app?.close());

  const single = (overrides: Record<string, unknown> = {}) => ({
    reference: `appointment-${unique()}@test`,
    start: '2027-03-01T08:00',
    end: '2027-03-01T09:00',
    resourceReference: f.resourceRef,
    productReference: f.productRef,
    ...overrides,
  });

  describe('create a single appointment', () => {
    it('answers 201 with the wrapped appointment; defaults: capacity 0, acceptBookings false, the resource address', async () => {
      const body = single();
      const res = await f.api.post(`${f.base}/appointments`, body);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        'api-info': API_INFO,
        appointment: {
          uuid: expect.any(String),
          reference: body.reference,
          acceptBookings: false,
          address: RESOURCE_ADDRESS,
          archived: false,
          capacity: 0,
          contactReference: null,
          description: null,
          start: '2027-03-01T07:00:00Z',
          end: '2027-03-01T08:00:00Z',
          notes: null,
          participations: [],
          price: null,
          productReference: f.productRef,
          productName: 'Viewing',
          resourceReference: f.resourceRef,
          seriesId: null,
          state: 'ACTIVE',
        },
      });
    });

    it('takes every optional field: capacity, acceptBookings, productName, contact with profile, address (object or text), price, description, notes', async () => {
      const contact = await createStaffUser(f.api, f.crmId, f.providerRef);
      const profileRef = `profile-${unique()}@test`;
      const profile = await f.api.post(`${f.base}/contactProfile`, {
        reference: profileRef,
        userReference: contact,
        providerReference: f.providerRef,
        name: 'Sam Staff',
        contactChannels: [{ type: 'email', value: 'sam@example.com' }],
      });
      expect(profile.status).toBe(201);
      const body = single({
        capacity: 4,
        acceptBookings: true,
        productName: 'Special viewing',
        contactReference: contact,
        contactProfileReference: profileRef,
        address: { city: 'Hamburg', zip: '20095', street: 'Markt', number: '2a', country: 'DE' },
        price: { value: 49.5, currency: 'CHF' },
        description: 'Bring ID',
        notes: 'internal',
      });
      const res = await f.api.post(`${f.base}/appointments`, body);
      expect(res.status).toBe(201);
      expect(res.body.appointment).toMatchObject({
        capacity: 4,
        acceptBookings: true,
        productName: 'Special viewing',
        contactReference: contact,
        address: { city: 'Hamburg', zip: '20095', street: 'Markt', number: '2a', countryCode: 'DE' },
        price: { value: 49.5, currency: 'CHF' },
        description: 'Bring ID',
        notes: 'internal',
      });
      const text = await f.api.post(`${f.base}/appointments`, single({ address: 'https://video.example.com/abc', price: { value: 10, currency: 'EUR' }, contact }));
      expect(text.status).toBe(201);
      expect(text.body.appointment).toMatchObject({ address: 'https://video.example.com/abc', price: { value: 10, currency: 'EUR' }, contactReference: contact });
    });

    it.each(['reference', 'start', 'end', 'resourceReference', 'productReference'])('names the missing required field %s (400)', async (field) => {
      const body: Record<string, unknown> = single();
      delete body[field];
      const res = await f.api.post(`${f.base}/appointments`, body);
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toEqual({ errorCode: 'VALIDATION_FAILED', message: `${field} is required` });
    });

    it.each([
      [{ resourceReference: 'no-such-resource' }, 'resourceReference: no resource no-such-resource'],
      [{ productReference: 'no-such-product' }, 'productReference: no product no-such-product'],
      [{ end: '2027-03-01T07:00' }, 'end must be after start'],
      [{ end: '2027-03-01T08:00' }, 'end must be after start'],
      [{ start: '01.03.2027 08:00' }, 'start must be an ISO 8601 date-time'],
      [{ price: { value: 10, currency: 'USD' } }, 'price.currency must be one of EUR, CHF'],
      [{ price: { value: -1, currency: 'EUR' } }, 'price.value must be at least 0'],
      [{ price: { currency: 'EUR' } }, 'price.value is required'],
      [{ capacity: -1 }, 'capacity must be at least 0'],
      [{ capacity: 1.5 }, 'capacity must be a whole number'],
      [{ acceptBookings: 'yes' }, 'acceptBookings must be a boolean'],
      [{ contactProfileReference: 'profile@test' }, 'contact is required when contactProfileReference is given'],
      [{ contactReference: 'nobody@test' }, 'contact: no user with reference nobody@test'],
      [{ address: { city: 'Berlin' } }, 'address'],
    ])('refuses %j with 400', async (override, message) => {
      const res = await f.api.post(`${f.base}/appointments`, single(override));
      expect(res.status).toBe(400);
      expect(res.body.errors[0].errorCode).toBe('VALIDATION_FAILED');
      expect(res.body.errors[0].message).toContain(message);
    });

    it('refuses a product or resource of another provider of the same CRM (400)', async () => {
      const other = await setupProvider(f.api, f.crmId);
      const otherProduct = await createProduct(f.api, f.crmId, other.providerRef);
      const otherResource = await createResource(f.api, f.crmId, other.providerRef);
      expect((await f.api.post(`${f.base}/appointments`, single({ productReference: otherProduct }))).status).toBe(400);
      expect((await f.api.post(`${f.base}/appointments`, single({ resourceReference: otherResource }))).status).toBe(400);
    });

    it('refuses a contact profile that belongs to another user than the contact (400)', async () => {
      const owner = await createStaffUser(f.api, f.crmId, f.providerRef);
      const contact = await createStaffUser(f.api, f.crmId, f.providerRef);
      const profileRef = `profile-${unique()}@test`;
      const profile = await f.api.post(`${f.base}/contactProfile`, {
        reference: profileRef,
        userReference: owner,
        providerReference: f.providerRef,
        name: 'Owner profile',
        contactChannels: [{ type: 'phone', value: '+49 30 123456' }],
      });
      expect(profile.status).toBe(201);
      const res = await f.api.post(`${f.base}/appointments`, single({ contactReference: contact, contactProfileReference: profileRef }));
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toBe(`contactProfileReference: profile ${profileRef} does not belong to contact ${contact}`);
    });

    it('refuses a user who is not staff as contact (400)', async () => {
      const outsider = await createUser(f.api, f.crmId);
      const res = await f.api.post(`${f.base}/appointments`, single({ contactReference: outsider }));
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toContain('is not staff');
    });

    it('refuses a duplicate reference (409)', async () => {
      const body = single();
      expect((await f.api.post(`${f.base}/appointments`, body)).status).toBe(201);
      const again = await f.api.post(`${f.base}/appointments`, single({ reference: body.reference, start: '2027-03-02T08:00', end: '2027-03-02T09:00' }));
      expect(again.status).toBe(409);
      expect(again.body.errors[0]).toEqual({ errorCode: 'CONFLICT', message: `Appointment reference ${body.reference} already exists` });
    });

    it("reads wall-clock input in the provider's zone: Europe/Berlin and America/New_York; listings answer UTC with Z", async () => {
      const berlin = await createAppointment(f, { start: '2027-03-01T08:00', end: '2027-03-01T09:30' });
      expect(berlin).toMatchObject({ start: '2027-03-01T07:00:00Z', end: '2027-03-01T08:30:00Z' });
      const summer = await createAppointment(f, { start: '2027-07-01T08:00', end: '2027-07-01T09:00' });
      expect(summer).toMatchObject({ start: '2027-07-01T06:00:00Z', end: '2027-07-01T07:00:00Z' });
      const ny = await setupScheduling(app, { timeZone: 'America/New_York' });
      const nyAppointment = await createAppointment(ny, { start: '2027-03-01T08:00', end: '2027-03-01T09:00' });
      expect(nyAppointment).toMatchObject({ start: '2027-03-01T13:00:00Z', end: '2027-03-01T14:00:00Z' });
      const list = await ny.api.get(`${ny.base}/appointments`);
      expect(list.body.map((a: { start: string }) => a.start)).toEqual(['2027-03-01T13:00:00Z']);
    });
  });

  describe('create a series', () => {
    const series = (overrides: Record<string, unknown> = {}, seriesData: Record<string, unknown> = {}) => ({
      reference: 'ignored@test',
      from: '2027-03-01T09:00',
      to: '2027-03-01T11:00',
      capacity: 3,
      acceptBookings: true,
      resourceReference: f.resourceRef,
      productReference: f.productRef,
      ...overrides,
      series_data: { from: '2027-03-01T00:00', to: '2027-03-15T00:00', raster: 60, weekdays: ['1', '3'], ...seriesData },
    });

    it('creates the appointments of every listed weekday, cut by raster, sharing one seriesId, with generated references (201)', async () => {
      const res = await f.api.post(`${f.base}/appointments`, series());
      expect(res.status).toBe(201);
      expect(res.body['api-info']).toEqual(API_INFO);
      const { seriesId, appointments } = res.body;
      expect(seriesId).toEqual(expect.any(String));
      // Mondays and Wednesdays 2027-03-01 .. 2027-03-14: 1, 3, 8, 10 March; 09:00-11:00 in 60 minutes: 2 each.
      expect(appointments).toHaveLength(8);
      expect(appointments.map((a: { start: string }) => a.start)).toEqual([
        '2027-03-01T08:00:00Z',
        '2027-03-01T09:00:00Z',
        '2027-03-03T08:00:00Z',
        '2027-03-03T09:00:00Z',
        '2027-03-08T08:00:00Z',
        '2027-03-08T09:00:00Z',
        '2027-03-10T08:00:00Z',
        '2027-03-10T09:00:00Z',
      ]);
      for (const appointment of appointments) {
        expect(appointment).toMatchObject({ seriesId, capacity: 3, acceptBookings: true, address: RESOURCE_ADDRESS, state: 'ACTIVE' });
        expect(appointment.reference).not.toBe('ignored@test');
      }
      expect(new Set(appointments.map((a: { reference: string }) => a.reference)).size).toBe(8);
      const listed = (await f.api.get(`${f.base}/appointments`)).body.filter((a: { seriesId: string | null }) => a.seriesId === seriesId);
      expect(listed).toHaveLength(8);
    });

    it('keeps 09:00 local time across the daylight-saving change of 2027-03-28', async () => {
      const res = await f.api.post(
        `${f.base}/appointments`,
        series({ from: '2027-03-26T09:00', to: '2027-03-26T10:00' }, { from: '2027-03-26T00:00', to: '2027-03-31T00:00', weekdays: ['1', '2', '3', '4', '5', '6', '7'] }),
      );
      expect(res.status).toBe(201);
      expect(res.body.appointments.map((a: { start: string; end: string }) => [a.start, a.end])).toEqual([
        ['2027-03-26T08:00:00Z', '2027-03-26T09:00:00Z'],
        ['2027-03-27T08:00:00Z', '2027-03-27T09:00:00Z'],
        ['2027-03-28T07:00:00Z', '2027-03-28T08:00:00Z'],
        ['2027-03-29T07:00:00Z', '2027-03-29T08:00:00Z'],
        ['2027-03-30T07:00:00Z', '2027-03-30T08:00:00Z'],
      ]);
    });

    it('needs no weekdays for a series within one day', async () => {
      const res = await f.api.post(`${f.base}/appointments`, series({ from: undefined, to: undefined }, { from: '2027-04-05T09:00', to: '2027-04-05T12:00', raster: 30, weekdays: undefined }));
      expect(res.status).toBe(201);
      expect(res.body.appointments).toHaveLength(6);
    });

    it.each([
      [{}, { weekdays: undefined }, 'series_data.weekdays is required when the series spans more than one day'],
      [{}, { weekdays: [] }, 'series_data.weekdays must contain at least 1'],
      [{}, { weekdays: ['8'] }, 'series_data.weekdays[0] must be one of 1, 2, 3, 4, 5, 6, 7'],
      [{}, { weekdays: [1] }, 'series_data.weekdays[0]'],
      [{}, { raster: 0 }, 'series_data.raster must be greater than 0'],
      [{}, { from: undefined }, 'series_data.from is required'],
      [{}, { to: undefined }, 'series_data.to is required'],
      [{}, { raster: undefined }, 'series_data.raster is required'],
      [{}, { to: '2027-02-01T00:00' }, 'series_data.to must be after series_data.from'],
      [{ to: '2027-03-01T08:00' }, {}, 'to must be after from'],
      [{ resourceReference: undefined }, {}, 'resourceReference is required'],
      [{ productReference: 'no-such-product' }, {}, 'productReference: no product'],
      [{}, { weekdays: ['7'], to: '2027-03-06T00:00' }, 'series_data yields no appointment'],
    ])('refuses %j / series_data %j with 400', async (override, seriesData, message) => {
      const res = await f.api.post(`${f.base}/appointments`, series(override, seriesData));
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toContain(message);
    });
  });

  describe('list', () => {
    it('answers a plain array with every documented field, participations with messages; filters by product, resource and archived', async () => {
      const g = await setupScheduling(app);
      const contact = await createStaffUser(g.api, g.crmId, g.providerRef);
      const otherProduct = await createProduct(g.api, g.crmId, g.providerRef, { name: 'Other' });
      const otherResource = await createResource(g.api, g.crmId, g.providerRef, { products: [otherProduct] });
      const a = await createAppointment(g, { start: '2027-05-03T10:00', end: '2027-05-03T11:00', contactReference: contact, description: 'd', notes: 'n', price: { value: 12, currency: 'EUR' } });
      const b = await createAppointment(g, { start: '2027-05-04T10:00', end: '2027-05-04T11:00', productReference: otherProduct });
      const c = await createAppointment(g, { start: '2027-05-05T10:00', end: '2027-05-05T11:00', resourceReference: otherResource, productReference: otherProduct });
      const customerReference = `customer-${unique()}@test`;
      const customer = await g.api.post(`${g.base}/customers`, {
        customerReference,
        providerReference: g.providerRef,
        userName: 'Paula Participant',
        email: 'paula@example.com',
        mobile: '+49 170 1111111',
        note: 'VIP',
      });
      expect(customer.status).toBe(201);
      const participation = await addParticipation(g, a.reference, { customerReference, state: 'BOOKED', message: 'See you', query: 'sendMails=false' });
      expect(participation.res.status).toBe(201);

      const res = await g.api.get(`${g.base}/appointments`);
      expect(res.status).toBe(200);
      expect(res.body.map((x: { reference: string }) => x.reference)).toEqual([a.reference, b.reference, c.reference]);
      expect(res.body[0]).toEqual({
        uuid: a.uuid,
        reference: a.reference,
        acceptBookings: false,
        address: RESOURCE_ADDRESS,
        archived: false,
        capacity: 5,
        contactReference: contact,
        description: 'd',
        start: '2027-05-03T08:00:00Z',
        end: '2027-05-03T09:00:00Z',
        notes: 'n',
        participations: [
          {
            reference: participation.reference,
            customerReference,
            email: 'paula@example.com',
            mobile: '+49 170 1111111',
            name: 'Paula Participant',
            note: 'VIP',
            state: 'BOOKED',
            messages: ['See you'],
          },
        ],
        price: { value: 12, currency: 'EUR' },
        productReference: g.productRef,
        productName: 'Viewing',
        resourceReference: g.resourceRef,
        seriesId: null,
        state: 'ACTIVE',
      });

      const byProduct = await g.api.get(`${g.base}/appointments?productRef=${enc(otherProduct)}`);
      expect(byProduct.body.map((x: { reference: string }) => x.reference)).toEqual([b.reference, c.reference]);
      const byResource = await g.api.get(`${g.base}/appointments?resourceRef=${enc(otherResource)}`);
      expect(byResource.body.map((x: { reference: string }) => x.reference)).toEqual([c.reference]);
      const both = await g.api.get(`${g.base}/appointments?productRef=${enc(otherProduct)}&resourceRef=${enc(g.resourceRef)}`);
      expect(both.body.map((x: { reference: string }) => x.reference)).toEqual([b.reference]);
      expect((await g.api.get(`${g.base}/appointments?productRef=nothing`)).body).toEqual([]);

      // Deleting a resource with ignoreFutureAppointments cancels and archives its future appointments.
      expect((await g.api.delete(`${g.base}/resources/${enc(otherResource)}?ignoreFutureAppointments=true`)).status).toBeLessThan(300);
      const withoutArchived = await g.api.get(`${g.base}/appointments`);
      expect(withoutArchived.body.map((x: { reference: string }) => x.reference)).toEqual([a.reference, b.reference]);
      const withArchived = await g.api.get(`${g.base}/appointments?includeArchived=true`);
      expect(withArchived.body.map((x: { reference: string }) => x.reference)).toEqual([a.reference, b.reference, c.reference]);
      expect(withArchived.body[2]).toMatchObject({ archived: true, state: 'CANCELLED' });
      expect((await g.api.get(`${g.base}/appointments?includeArchived=false`)).body).toHaveLength(2);
      expect((await g.api.get(`${g.base}/appointments?includeArchived=maybe`)).status).toBe(400);
    });

    it('shows participations oldest first and leaves out holds whose time is up; the stored product name wins; the view is the one every answer shows', async () => {
      const g = await setupScheduling(app);
      const t0 = new Date('2026-06-10T08:00:00Z');
      app.clock.set(t0);
      try {
        const a = await createAppointment(g, { start: '2027-05-03T10:00', end: '2027-05-03T11:00', capacity: 3, productName: 'Sonderbesichtigung' });
        const expiring = await addParticipation(g, a.reference, { state: 'RESERVED' });
        app.clock.set(new Date(t0.getTime() + 60_000));
        const booked = await addParticipation(g, a.reference, { state: 'BOOKED', query: 'sendMails=false' });
        app.clock.set(new Date(t0.getTime() + 2 * 60_000));
        const live = await addParticipation(g, a.reference, { state: 'RESERVED' });
        const listed = async () => (await g.api.get(`${g.base}/appointments`)).body.find((x: { reference: string }) => x.reference === a.reference);

        expect((await listed()).participations.map((p: { reference: string }) => p.reference)).toEqual([expiring.reference, booked.reference, live.reference]);
        // The first hold ran out at t0 + 3 min, the second runs until t0 + 5 min.
        app.clock.set(new Date(t0.getTime() + 4 * 60_000));
        const later = await listed();
        expect(later.participations.map((p: { reference: string; state: string }) => [p.reference, p.state])).toEqual([
          [booked.reference, 'BOOKED'],
          [live.reference, 'RESERVED'],
        ]);
        expect(later.productName).toBe('Sonderbesichtigung');
        // The cancellation answers the appointment through the entity path: the list shows it alike.
        const cancelled = await g.api.delete(`${g.base}/appointments?message=x`, { appointmentReference: a.reference });
        expect(cancelled.status).toBe(200);
        expect(await listed()).toEqual(cancelled.body.appointment);
      } finally {
        app.clock.reset();
      }
    });

    it('lists cancelled appointments too', async () => {
      const g = await setupScheduling(app);
      const a = await createAppointment(g);
      expect((await g.api.delete(`${g.base}/appointments`, { appointmentReference: a.reference })).status).toBe(200);
      const list = await g.api.get(`${g.base}/appointments`);
      expect(list.body).toEqual([expect.objectContaining({ reference: a.reference, state: 'CANCELLED' })]);
    });
  });

  describe('delete without notification', () => {
    it('deletes one appointment by reference with its participations and writes no mail (204)', async () => {
      const a = await createAppointment(f);
      const keep = await createAppointment(f);
      await addParticipation(f, a.reference, { state: 'BOOKED' });
      await addParticipation(f, a.reference, { state: 'REQUESTED' });
      const before = await mailRowsOfAppointmentIds(app, [a.uuid]);
      const res = await f.api.delete(`${f.base}/appointments/withoutNotification`, { appointmentReference: a.reference });
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(await mailRowsOfAppointmentIds(app, [a.uuid])).toEqual(before);
      expect(await sql(app, 'select id from participation where appointment_id = ?', [a.uuid])).toEqual([]);
      const list = (await f.api.get(`${f.base}/appointments`)).body.map((x: { reference: string }) => x.reference);
      expect(list).not.toContain(a.reference);
      expect(list).toContain(keep.reference);
      expect((await f.api.delete(`${f.base}/appointments/withoutNotification`, { appointmentReference: a.reference })).status).toBe(404);
    });

    it('deletes every appointment of a series by seriesId and writes no mail (204)', async () => {
      const created = await f.api.post(`${f.base}/appointments`, {
        resourceReference: f.resourceRef,
        productReference: f.productRef,
        capacity: 2,
        series_data: { from: '2027-08-02T09:00', to: '2027-08-02T12:00', raster: 60 },
      });
      expect(created.status).toBe(201);
      const { seriesId, appointments } = created.body;
      await addParticipation(f, appointments[0].reference, { state: 'BOOKED' });
      const ids = appointments.map((a: { uuid: string }) => a.uuid);
      const before = await mailRowsOfAppointmentIds(app, ids);
      expect((await f.api.delete(`${f.base}/appointments/withoutNotification`, { seriesId })).status).toBe(204);
      expect(await mailRowsOfAppointmentIds(app, ids)).toEqual(before);
      const list = (await f.api.get(`${f.base}/appointments?includeArchived=true`)).body;
      expect(list.filter((a: { seriesId: string | null }) => a.seriesId === seriesId)).toEqual([]);
      expect((await f.api.delete(`${f.base}/appointments/withoutNotification`, { seriesId })).status).toBe(404);
    });

    it('needs exactly one of appointmentReference and seriesId (400)', async () => {
      const path = `${f.base}/appointments/withoutNotification`;
      expect((await f.api.delete(path, {})).body.errors[0].message).toContain('either appointmentReference or seriesId');
      expect((await f.api.delete(path, { appointmentReference: 'a', seriesId: 'b' })).status).toBe(400);
      expect((await f.api.delete(path)).status).toBe(400);
    });
  });

  describe('cancel', () => {
    it("sets CANCELLED, every participation CANCELED and writes one 'appointment-cancelled' mail per participant with the message", async () => {
      const a = await createAppointment(f, { capacity: 10 });
      const booked = await addParticipation(f, a.reference, { state: 'BOOKED', query: 'sendMails=false' });
      const requested = await addParticipation(f, a.reference, { state: 'REQUESTED', query: 'sendMails=false' });
      const held = await addParticipation(f, a.reference, { state: 'RESERVED', query: 'sendMails=false' });
      const alreadyCanceled = await addParticipation(f, a.reference, { state: 'CANCELED', query: 'sendMails=false' });
      // Removed administratively (BOOKED -> DELETED): rule 4 cancels it too, and DELETED -> CANCELED mails nobody.
      const deleted = await addParticipation(f, a.reference, { state: 'BOOKED', query: 'sendMails=false' });
      expect((await f.api.post(`${f.base}/participations/${enc(deleted.reference)}`, { state: 'DELETED' })).status).toBe(200);
      expect(await mailRowsOfAppointment(app, f.crmId, a.reference)).toEqual([]);

      const message = 'Sorry, the agent is ill – new date follows';
      const res = await f.api.delete(`${f.base}/appointments?message=${enc(message)}`, { appointmentReference: a.reference });
      expect(res.status).toBe(200);
      expect(res.body['api-info']).toEqual(API_INFO);
      expect(res.body.appointment).toMatchObject({ reference: a.reference, state: 'CANCELLED' });
      expect(res.body.appointment.participations.map((p: { state: string }) => p.state)).toEqual(['CANCELED', 'CANCELED', 'CANCELED', 'CANCELED', 'CANCELED']);
      const states = await sql<{ state: string }>(app, 'select state from participation where appointment_id = ?', [a.uuid]);
      expect(states.map((p) => p.state)).toEqual(['CANCELED', 'CANCELED', 'CANCELED', 'CANCELED', 'CANCELED']);

      // Participants who booked or asked for a place are told; a hold ends silently (as RESERVED -> CANCELED in the
      // transition table), and who was already cancelled hears nothing again.
      const mails = await mailRowsOfAppointment(app, f.crmId, a.reference);
      const participationIds = await sql<{ id: string; reference: string }>(app, 'select id, reference from participation where appointment_id = ?', [a.uuid]);
      const idOf = (reference: string) => participationIds.find((p) => p.reference === reference)!.id;
      expect(mails.map((m) => m.payload.params.participationId).sort()).toEqual([idOf(booked.reference), idOf(requested.reference)].sort());
      for (const mail of mails) {
        expect(mail.topic).toBe('mail');
        expect(mail.payload).toMatchObject({ template: 'appointment-cancelled', message, params: { appointmentId: a.uuid } });
      }
      expect(mails.map((m) => m.payload.params.participationId)).not.toContain(idOf(held.reference));
      expect(mails.map((m) => m.payload.params.participationId)).not.toContain(idOf(alreadyCanceled.reference));
      expect(mails.map((m) => m.payload.params.participationId)).not.toContain(idOf(deleted.reference));

      // Cancelling again changes nothing and sends nothing new.
      const again = await f.api.delete(`${f.base}/appointments?message=again`, { appointmentReference: a.reference });
      expect(again.status).toBe(200);
      expect(again.body.appointment.state).toBe('CANCELLED');
      expect(await mailRowsOfAppointment(app, f.crmId, a.reference)).toHaveLength(2);
    });

    it('works without a message (the mail carries null) and refuses new participations afterwards (409)', async () => {
      const a = await createAppointment(f);
      await addParticipation(f, a.reference, { state: 'BOOKED', query: 'sendMails=false' });
      expect((await f.api.delete(`${f.base}/appointments`, { appointmentReference: a.reference })).status).toBe(200);
      const mails = await mailRowsOfAppointment(app, f.crmId, a.reference);
      expect(mails).toHaveLength(1);
      expect(mails[0]!.payload.message).toBeNull();
      const late = await addParticipation(f, a.reference, { state: 'BOOKED' });
      expect(late.res.status).toBe(409);
    });

    it('answers 400 without appointmentReference and 404 for an unknown one', async () => {
      expect((await f.api.delete(`${f.base}/appointments`, {})).body.errors[0].message).toBe('appointmentReference is required');
      expect((await f.api.delete(`${f.base}/appointments`, { appointmentReference: 'no-such-appointment' })).status).toBe(404);
    });
  });

  it("gives another CRM 404 for this CRM's provider and appointments", async () => {
    const a = await createAppointment(f);
    const { crmId, api } = await app.newCrm();
    const other = `/crms/${crmId}/provider/${enc(f.providerRef)}`;
    expect((await api.get(`${other}/appointments`)).status).toBe(404);
    expect((await api.post(`${other}/appointments`, single())).status).toBe(404);
    expect((await api.delete(`${other}/appointments`, { appointmentReference: a.reference })).status).toBe(404);
    expect((await api.delete(`${other}/appointments/withoutNotification`, { appointmentReference: a.reference })).status).toBe(404);
    // Still there, still active.
    const list = (await f.api.get(`${f.base}/appointments`)).body;
    expect(list.find((x: { reference: string }) => x.reference === a.reference)).toMatchObject({ state: 'ACTIVE' });
  });
});
