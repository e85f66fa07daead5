import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BookingFixture, setupBookable } from '../support/booking-fixtures.js';
import {
  appointmentsOfTimeslot,
  book,
  bookablesOf,
  mailTemplatesOf,
  participationsOf,
  providerPath,
  reserve,
  resourceRefs,
  setChannel,
  slotOf,
  sql,
  updateResource,
  upcoming,
} from '../support/booking-flow.js';
import { DEFAULT_DATABASE_POOL } from '../../services/kernel/config.js';
import { createStaffUser } from '../support/offerings-fixtures.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { type ApiClient, unique } from '../support/http.js';

const MINUTE = 60_000;
const UUID = expect.stringMatching(/^[0-9a-f-]{36}$/);
const SLOT_TAKEN = { 'api-info': { version: '1' }, errors: [{ errorCode: '201', message: 'Das überlappt mit einem anderen Termin.' }] };

interface UserRow {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  mobile: string | null;
  language: string;
  reference: string | null;
}

describe('booking flow: POST /resources/:ref/create_appointment_with_consumer', () => {
  let app: TestApp;
  let pub: ApiClient;

  beforeAll(async () => {
    app = await startTestApp();
    pub = app.anonymous;
  });
  afterEach(() => app.clock.reset());
  afterAll(async () => app?.close());

  const usersByEmail = (f: BookingFixture, email: string) =>
    sql<UserRow>(app, 'select id, email, first_name, last_name, mobile, language, reference from app_user where crm_id = ? and email = ?', [f.crmId, email]);
  const customerOf = (participationId: string) =>
    sql<{ user_id: string; email: string; mobile: string | null; language: string | null; user_name: string }>(
      app,
      'select c.user_id, c.email, c.mobile, c.language, c.user_name from participation p join customer c on c.id = p.customer_id where p.id = ?',
      [participationId],
    );

  it('completes the own hold found by placeholder_id: 201 with exactly the documented shape', async () => {
    const f = await setupBookable(app, { capacity: 3 });
    const hold = await reserve(pub, f);
    const appointmentUuid = hold.body.participation.appointment_uuid;
    const res = await book(pub, f, { placeholder_id: hold.body.participation.customer_uuid });
    expect(res.status).toBe(201);
    const [bookable] = bookablesOf((await upcoming(pub, f.resourceUuid)).body);
    expect(res.body).toEqual({
      'api-info': { version: '1' },
      createdAppointment: {
        appointment_uuid: appointmentUuid,
        start: bookable.start,
        end: bookable.end,
        formattedStart: bookable.formattedStart,
        formattedEnd: bookable.formattedEnd,
        timeslot_uuid: f.timeslotUuid,
        product_uuid: f.productUuid,
        resource_uuid: f.resourceUuid,
        contact_channel: null,
        product_name: 'Viewing',
        resource_name: 'Agent',
        capacity: 3,
        capacity_left: 2,
        products: [{ uuid: f.productUuid, name: 'Viewing' }],
        kind: 'models.LotAppointment',
        cancelLink: expect.stringMatching(/^http:\/\/localhost:4000\/cancel\/[A-Za-z0-9_-]{71}$/),
      },
    });
    // The hold itself became the booking: one participation, BOOKED, no expiry.
    const rows = await participationsOf(app, appointmentUuid);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: hold.body.participation.uuid, state: 'BOOKED', expires_at: null, channel_key: 'RESOURCE_PUBLIC', customer_id: UUID });
    expect(bookable.capacity_left).toBe(2);
  });

  it('formats formattedStart/formattedEnd by timeFormat; a bad timeFormat is a 400 that books nothing', async () => {
    const f = await setupBookable(app);
    const bad = await book(pub, f, {}, 'timeFormat=yyyy%20Uhr');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].message).toContain('timeFormat');
    expect(await appointmentsOfTimeslot(app, f.timeslotUuid)).toEqual([]);
    const res = await book(pub, f, { locale: 'en' }, `timeFormat=${encodeURIComponent('EEEE HH:mm')}`);
    expect(res.body.createdAppointment.formattedStart).toMatch(/^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday) 09:00$/);
  });

  it('accepts the three reference forms and an appointment UUID in timeslot_uuid', async () => {
    const f = await setupBookable(app, { capacity: 5 });
    const refs = resourceRefs(f);
    const first = await pub.post(`/resources/${encodeURIComponent(refs.full)}/create_appointment_with_consumer`, bookingBody(f));
    expect(first.status).toBe(201);
    const appointmentUuid = first.body.createdAppointment.appointment_uuid;
    const second = await pub.post(`/resources/${encodeURIComponent(refs.short)}/create_appointment_with_consumer`, bookingBody(f, { timeslot_uuid: appointmentUuid }));
    expect(second.status).toBe(201);
    expect(second.body.createdAppointment.appointment_uuid).toBe(appointmentUuid);
    expect(second.body.createdAppointment.capacity_left).toBe(3);
    expect(await appointmentsOfTimeslot(app, f.timeslotUuid)).toHaveLength(1);
  });

  it('takes the slot’s only product when product_uuid is left out; asks for it when the slot offers several', async () => {
    const f = await setupBookable(app, { slots: 2 });
    const only = await book(pub, f, { product_uuid: undefined });
    expect(only.status).toBe(201);
    expect(only.body.createdAppointment.product_uuid).toBe(f.productUuid);

    const second = await f.api.post(`${providerPath(f)}/products`, { reference: `product-${unique()}@test`, name: 'Second' });
    await f.api.post(`${providerPath(f)}/resources/${encodeURIComponent(f.resourceRef)}`, { products: [f.productRef, second.body.product.reference] });
    const next = { start: new Date(new Date(f.slot.from).getTime() + 30 * MINUTE).toISOString(), end: new Date(new Date(f.slot.to).getTime() + 30 * MINUTE).toISOString() };
    const several = await book(pub, f, { ...next, product_uuid: undefined });
    expect(several.status).toBe(400);
    expect(several.body.errors[0].message).toBe('product_uuid is required: this slot offers several products');
    expect((await book(pub, f, { ...next, product_uuid: second.body.product.uuid })).status).toBe(201);
  });

  it('completes an expired hold while a place is free', async () => {
    const f = await setupBookable(app, { capacity: 1 });
    const hold = await reserve(pub, f);
    app.clock.advance(4 * MINUTE);
    const res = await book(pub, f, { placeholder_id: hold.body.participation.customer_uuid });
    expect(res.status).toBe(201);
    expect(res.body.createdAppointment.capacity_left).toBe(0);
    const rows = await participationsOf(app, hold.body.participation.appointment_uuid);
    expect(rows.map((r) => [r.id, r.state])).toEqual([[hold.body.participation.uuid, 'BOOKED']]);
  });

  it('refuses an expired hold with 412, errorCode 201 and the documented message once another consumer took the place', async () => {
    const f = await setupBookable(app, { capacity: 1 });
    const hold = await reserve(pub, f);
    app.clock.advance(4 * MINUTE);
    expect((await book(pub, f)).status).toBe(201);
    const late = await book(pub, f, { placeholder_id: hold.body.participation.customer_uuid });
    expect(late.status).toBe(412);
    expect(late.body).toEqual(SLOT_TAKEN);
    // Also when the worker already removed the expired hold.
    await sql(app, 'delete from participation where id = ?', [hold.body.participation.uuid]);
    expect((await book(pub, f, { placeholder_id: hold.body.participation.customer_uuid })).body).toEqual(SLOT_TAKEN);
  });

  it('writes no user or customer for a booking refused with 412 (the consumer is written with the place, in one statement)', async () => {
    const f = await setupBookable(app, { capacity: 1 });
    const hold = await reserve(pub, f);
    app.clock.advance(4 * MINUTE);
    expect((await book(pub, f)).status).toBe(201);
    const lateEmail = `${unique('late')}@example.com`;
    expect((await book(pub, f, { placeholder_id: hold.body.participation.customer_uuid, email: lateEmail })).status).toBe(412);
    const plainEmail = `${unique('plain')}@example.com`;
    expect((await book(pub, f, { email: plainEmail })).status).toBe(412);
    for (const email of [lateEmail, plainEmail]) {
      expect(await usersByEmail(f, email)).toEqual([]);
      expect(await sql(app, 'select id from customer where email = ?', [email])).toEqual([]);
    }
  });

  it('refuses to complete a hold (live or expired) once the appointment has begun', async () => {
    const f = await setupBookable(app, { capacity: 3 });
    const start = new Date(f.slot.from).getTime();
    app.clock.set(new Date(start - MINUTE));
    const live = await reserve(pub, f);
    const expired = await reserve(pub, f);
    app.clock.set(new Date(start + MINUTE / 2)); // the first hold still lasts 90 seconds
    const late = await book(pub, f, { placeholder_id: live.body.participation.customer_uuid });
    expect(late.status).toBe(412);
    expect(late.body).toEqual(SLOT_TAKEN);
    app.clock.set(new Date(start + 86_400_000));
    expect((await book(pub, f, { placeholder_id: expired.body.participation.customer_uuid })).body).toEqual(SLOT_TAKEN);
    expect((await participationsOf(app, live.body.participation.appointment_uuid)).map((p) => p.state)).toEqual(['RESERVED', 'RESERVED']);
  });

  it('answers 400 for each missing or invalid field and books nothing', async () => {
    const f = await setupBookable(app);
    for (const field of ['start', 'end', 'timeslot_uuid', 'email', 'firstname', 'lastname']) {
      const res = await book(pub, f, { [field]: undefined });
      expect(res.status, field).toBe(400);
      expect(res.body.errors[0].message).toBe(`${field} is required`);
      const empty = await book(pub, f, { [field]: '' });
      expect(empty.status, `${field} empty`).toBe(400);
    }
    const invalid: [Record<string, unknown>, string][] = [
      [{ email: 'not-an-email' }, 'email'],
      [{ mobile: 'call me' }, 'mobile'],
      [{ timeslot_uuid: 'abc' }, 'timeslot_uuid'],
      [{ product_uuid: 'abc' }, 'product_uuid'],
      [{ placeholder_id: 'abc' }, 'placeholder_id'],
      [{ locale: 'deutsch' }, 'locale'],
      [{ channelKey: 'SOMEWHERE' }, 'channelKey'],
      [{ start: '2026-13-01T10:00' }, 'start'],
      [{ end: new Date(0).toISOString() }, 'end must be after start'],
      [{ firstname: 42 }, 'firstname'],
      [{ message: 'x'.repeat(1025) }, 'message must be at most 1024 characters'],
      [{ timeslot_uuid: '00000000-0000-4000-8000-000000000000' }, 'timeslot_uuid'],
    ];
    for (const [body, message] of invalid) {
      const res = await book(pub, f, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.errors[0].message).toContain(message);
    }
    expect(await appointmentsOfTimeslot(app, f.timeslotUuid)).toEqual([]);
    const longest = await book(pub, f, { message: 'ä'.repeat(1024) });
    expect(longest.status).toBe(201);
  });

  it('refuses the same consumer twice with 409 AppointmentAlreadyBookedException', async () => {
    const f = await setupBookable(app, { capacity: 5 });
    const email = `${unique('twice')}@example.com`;
    expect((await book(pub, f, { email })).status).toBe(201);
    const again = await book(pub, f, { email: email.toUpperCase(), firstname: 'Other' });
    expect(again.status).toBe(409);
    expect(again.body.errors[0].errorCode).toBe('AppointmentAlreadyBookedException');
    expect(again.body.errors[0].message).toContain('AppointmentAlreadyBookedException');
    // Also when the second attempt completes a hold.
    const hold = await reserve(pub, f);
    expect((await book(pub, f, { email, placeholder_id: hold.body.participation.customer_uuid })).status).toBe(409);
    expect((await participationsOf(app, hold.body.participation.appointment_uuid)).map((p) => p.state).sort()).toEqual(['BOOKED', 'RESERVED']);
  });

  it('attaches the booking to a CRM-managed user found by e-mail and fills only its missing attributes', async () => {
    const f = await setupBookable(app);
    const email = `${unique('known')}@example.com`;
    const reference = `known-${unique()}@test`;
    const created = await f.api.post(`/crms/${f.crmId}/user`, { reference, email, username: unique('known'), lastName: 'Known' });
    expect(created.status).toBe(201);
    const res = await book(pub, f, { email, firstname: 'Karla', lastname: 'Other', mobile: '+49 170 5550001', locale: 'en' });
    expect(res.status).toBe(201);
    const users = await usersByEmail(f, email);
    // Spec: missing attributes are added to the existing user, never overwritten; the CRM sees them.
    expect(users).toEqual([{ id: UUID, email, first_name: 'Karla', last_name: 'Known', mobile: '+491705550001', language: 'de', reference }]);
    expect((await f.api.get(`/crms/${f.crmId}/user/${encodeURIComponent(reference)}`)).body.user).toMatchObject({ firstName: 'Karla', lastName: 'Known', mobile: '+491705550001' });
    const [participation] = await participationsOf(app, res.body.createdAppointment.appointment_uuid);
    expect(await customerOf(participation!.id)).toEqual([{ user_id: users[0]!.id, email, mobile: '+491705550001', language: 'en', user_name: 'Karla Other' }]);
    expect(participation!.locale).toBe('en');
  });

  it('never writes to a resource’s contact, whom the public is shown, though no longer staff', async () => {
    const f = await setupBookable(app);
    const contact = await createStaffUser(f.api, f.crmId, f.providerRef);
    await updateResource(f, f.resourceRef, { contact });
    expect((await f.api.delete(`${providerPath(f)}/staff/${encodeURIComponent(contact)}`)).status).toBe(204);
    const before = (await f.api.get(`/crms/${f.crmId}/user/${encodeURIComponent(contact)}`)).body.user;
    expect(before.mobile).toBeNull();
    expect((await book(pub, f, { email: before.email, firstname: 'Mallory', lastname: 'Public', mobile: '+49 170 5550009' })).status).toBe(201);
    expect((await f.api.get(`/crms/${f.crmId}/user/${encodeURIComponent(contact)}`)).body.user).toEqual(before);
  });

  it('fills only missing attributes of a user the booking flow created', async () => {
    const f = await setupBookable(app, { slots: 2 });
    const email = `${unique('again')}@example.com`;
    expect((await book(pub, f, { email, firstname: 'Anna', lastname: 'First' })).status).toBe(201);
    const second = slotOf(f, 1);
    const again = await book(pub, f, { email, firstname: 'Other', lastname: 'Name', mobile: '0170 5550002', start: second.from, end: second.to });
    expect(again.status).toBe(201);
    expect(await usersByEmail(f, email)).toEqual([{ id: UUID, email, first_name: 'Anna', last_name: 'First', mobile: '+491705550002', language: 'de', reference: null }]);
  });

  it('attaches a booking whose e-mail no user has to the one user with its mobile, in either spelling; two users with that number match none', async () => {
    const f = await setupBookable(app, { slots: 3 });
    const usersOfCrm = async () => Number((await sql<{ n: number }>(app, 'select count(*)::int as n from app_user where crm_id = ?', [f.crmId]))[0]!.n);
    const email = `${unique('mobile')}@example.com`;
    const mobile = `+49170${String(Date.now()).slice(-7)}`;
    const crmUser = await f.api.post(`/crms/${f.crmId}/user`, { reference: `m-${unique()}@test`, email, username: unique('m'), lastName: 'Mobile', mobile });
    expect(crmUser.status).toBe(201);
    const before = await usersOfCrm();
    const flowEmail = `${unique('flow')}@example.com`;
    const res = await book(pub, f, { email: flowEmail, firstname: 'Fritz', lastname: 'Flow', mobile: mobile.replace('+49170', '0170 ') });
    expect(res.status).toBe(201);
    // No user for the typed e-mail: the booking belongs to the user with that number, whose missing first name is filled.
    expect(await usersByEmail(f, flowEmail)).toEqual([]);
    expect(await usersOfCrm()).toBe(before);
    const [owner] = await usersByEmail(f, email);
    expect(owner).toMatchObject({ first_name: 'Fritz', last_name: 'Mobile', mobile });
    const [participation] = await participationsOf(app, res.body.createdAppointment.appointment_uuid);
    expect((await customerOf(participation!.id))[0]).toMatchObject({ user_id: owner!.id, email });

    // A CRM keeps numbers as sent: the same spelling finds them too.
    const spaced = `+49 171 ${String(Date.now()).slice(-7)}`;
    const spacedEmail = `${unique('spaced')}@example.com`;
    expect((await f.api.post(`/crms/${f.crmId}/user`, { reference: `s-${unique()}@test`, email: spacedEmail, username: unique('s'), lastName: 'Spaced', firstName: 'Sue', mobile: spaced })).status).toBe(201);
    const typed = await book(pub, f, { email: `${unique('typed')}@example.com`, firstname: 'Other', lastname: 'Name', mobile: spaced, start: slotOf(f, 1).from, end: slotOf(f, 1).to });
    expect(typed.status).toBe(201);
    const [typedParticipation] = await participationsOf(app, typed.body.createdAppointment.appointment_uuid);
    expect((await customerOf(typedParticipation!.id))[0]).toMatchObject({ email: spacedEmail });
    expect((await usersByEmail(f, spacedEmail))[0]).toMatchObject({ first_name: 'Sue', last_name: 'Spaced', mobile: spaced });

    // Two users with one number: which one is meant is unknown, so neither; the booking gets a user of its own.
    const shared = `+49172${String(Date.now()).slice(-7)}`;
    for (const name of ['One', 'Two']) {
      expect((await f.api.post(`/crms/${f.crmId}/user`, { reference: `${name}-${unique()}@test`, email: `${unique(name)}@example.com`, username: unique(name), lastName: name, mobile: shared })).status).toBe(201);
    }
    const ownEmail = `${unique('own')}@example.com`;
    expect((await book(pub, f, { email: ownEmail, firstname: 'Olli', lastname: 'Own', mobile: shared, start: slotOf(f, 2).from, end: slotOf(f, 2).to })).status).toBe(201);
    expect(await usersByEmail(f, ownEmail)).toEqual([{ id: UUID, email: ownEmail, first_name: 'Olli', last_name: 'Own', mobile: shared, language: 'de', reference: null }]);
  });

  it('an e-mail beats a mobile: the user with the typed e-mail is taken, though another user has the number', async () => {
    const f = await setupBookable(app);
    const mobile = `+49173${String(Date.now()).slice(-7)}`;
    const mobileEmail = `${unique('num')}@example.com`;
    expect((await f.api.post(`/crms/${f.crmId}/user`, { reference: `n-${unique()}@test`, email: mobileEmail, username: unique('n'), lastName: 'Number', mobile })).status).toBe(201);
    const email = `${unique('mail')}@example.com`;
    expect((await book(pub, f, { email, firstname: 'Ema', lastname: 'Il' })).status).toBe(201);
    const res = await book(pub, f, { email, firstname: 'Ema', lastname: 'Il', mobile, start: slotOf(f, 1).from, end: slotOf(f, 1).to });
    expect(res.status).toBe(201);
    const [participation] = await participationsOf(app, res.body.createdAppointment.appointment_uuid);
    const [own] = await usersByEmail(f, email);
    expect((await customerOf(participation!.id))[0]).toMatchObject({ user_id: own!.id, email });
    expect(own).toMatchObject({ mobile });
  });

  it('creates a new user otherwise, with the language from locale', async () => {
    const f = await setupBookable(app);
    const email = `${unique('new')}@example.com`;
    const res = await book(pub, f, { email: email.toUpperCase(), firstname: 'Nina', lastname: 'Neu', mobile: '+41 79 555 00 11', locale: 'en-GB', message: 'Bitte klingeln' });
    expect(res.status).toBe(201);
    expect(await usersByEmail(f, email)).toEqual([{ id: UUID, email, first_name: 'Nina', last_name: 'Neu', mobile: '+41795550011', language: 'en', reference: null }]);
    const [participation] = await participationsOf(app, res.body.createdAppointment.appointment_uuid);
    expect(participation).toMatchObject({ state: 'BOOKED', locale: 'en', messages: ['Bitte klingeln'] });
    expect(await customerOf(participation!.id)).toEqual([{ user_id: UUID, email, mobile: '+41795550011', language: 'en', user_name: 'Nina Neu' }]);
    const defaultLanguage = await book(pub, f, { email: `${unique('de')}@example.com` });
    const [, second] = await participationsOf(app, defaultLanguage.body.createdAppointment.appointment_uuid);
    expect(second!.locale).toBeNull();
  });

  it('IMMEDIATE channels book at once and write the confirmation and the provider notification to the outbox', async () => {
    const f = await setupBookable(app);
    const res = await book(pub, f, { message: 'See you' });
    const [participation] = await participationsOf(app, res.body.createdAppointment.appointment_uuid);
    expect(participation!.state).toBe('BOOKED');
    expect(await mailTemplatesOf(app, participation!.id)).toEqual(['booking-confirmation', 'provider-booking-notification']);
    const payloads = await sql<{ payload: { message: string } }>(app, `select payload from outbox_message where kind = 'mail' and payload->'params'->>'participationId' = ?`, [participation!.id]);
    expect(payloads.map((row) => row.payload.message)).toEqual(['See you', 'See you']);
  });

  it('REQUESTED channels (set through the channel extension) give REQUESTED with the request mails; the place is taken', async () => {
    const f = await setupBookable(app, { capacity: 1 });
    const saved = await setChannel(f, 'RESOURCE_PUBLIC', { bookingProcess: 'REQUESTED' });
    expect(saved.body.channel).toMatchObject({ channelKey: 'RESOURCE_PUBLIC', bookingProcess: 'REQUESTED', visible: true });
    const hold = await reserve(pub, f);
    const res = await book(pub, f, { placeholder_id: hold.body.participation.customer_uuid });
    expect(res.status).toBe(201);
    expect(res.body.createdAppointment.capacity_left).toBe(0);
    const [participation] = await participationsOf(app, res.body.createdAppointment.appointment_uuid);
    expect(participation!.state).toBe('REQUESTED');
    expect(await mailTemplatesOf(app, participation!.id)).toEqual(['booking-request-received', 'provider-booking-request']);
    expect((await book(pub, f)).status).toBe(412);

    // The CRM sees the request under a reference (the participation's UUID) and confirms it: REQUESTED → BOOKED.
    const listed = await f.api.get(`${providerPath(f)}/appointments`);
    const requestedRow = listed.body.flatMap((a: { participations: { reference: string; state: string }[] }) => a.participations).find((p: { state: string }) => p.state === 'REQUESTED');
    expect(requestedRow.reference).toBe(participation!.id);
    const confirmed = await f.api.post(`${providerPath(f)}/participations/${participation!.id}`, { state: 'BOOKED' });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body.participation).toMatchObject({ reference: participation!.id, state: 'BOOKED' });

    // Another channel of the same resource keeps its own (default) process.
    const g = await setupBookable(app, { capacity: 2 });
    await setChannel(g, 'CALENDAR_PUBLIC', { bookingProcess: 'REQUESTED' });
    const immediate = await book(pub, g);
    const requested = await book(pub, g, { channelKey: 'CALENDAR_PUBLIC' });
    const rows = await participationsOf(app, immediate.body.createdAppointment.appointment_uuid);
    expect(rows.map((r) => [r.state, r.channel_key])).toEqual([
      ['BOOKED', 'RESOURCE_PUBLIC'],
      ['REQUESTED', 'CALENDAR_PUBLIC'],
    ]);
    expect(requested.status).toBe(201);
  });

  it('RESOURCE_EXCLUSIVE takes bookings only from the accepted customers', async () => {
    await expectExclusiveChannel(app);
  });

  it('RESOURCE_EXCLUSIVE bookings read on the connection of their transaction: they work with a pool of one connection', async () => {
    // The accepted customers are read inside the booking's transaction: a read needing a second pooled connection would wait forever here.
    const small = await startTestApp({ config: { databasePool: { ...DEFAULT_DATABASE_POOL, max: 1 } } });
    try {
      await expectExclusiveChannel(small);
    } finally {
      await small.close();
    }
  });

  async function expectExclusiveChannel(target: TestApp) {
    const client = target.anonymous;
    const f = await setupBookable(target, { capacity: 5 });
    const acceptedEmail = `${unique('vip')}@example.com`;
    const customerReference = `customer-${unique()}@test`;
    const customer = await f.api.post(`${providerPath(f)}/customers`, { customerReference, providerReference: f.providerRef, userName: 'Vera Vip', email: acceptedEmail });
    expect(customer.status).toBe(201);
    const saved = await setChannel(f, 'RESOURCE_EXCLUSIVE', { acceptedCustomers: [customerReference] });
    expect(saved.body.channel.acceptedCustomers).toEqual([customerReference]);

    const stranger = await book(client, f, { channelKey: 'RESOURCE_EXCLUSIVE' });
    expect(stranger.status).toBe(403);
    expect(await appointmentsOfTimeslot(target, f.timeslotUuid)).toEqual([]);
    const accepted = await book(client, f, { channelKey: 'RESOURCE_EXCLUSIVE', email: acceptedEmail });
    expect(accepted.status).toBe(201);
    // The accepted customer's own record is used, not a second one.
    const customers = await sql<{ n: string }>(target, 'select count(*) as n from customer where provider_id = (select provider_id from resource where id = ?) and email = ?', [f.resourceUuid, acceptedEmail]);
    expect(Number(customers[0]!.n)).toBe(1);
    // Public booking of the same resource is unaffected.
    expect((await book(client, f)).status).toBe(201);
  }

  function bookingBody(f: BookingFixture, body: Record<string, unknown> = {}) {
    return {
      start: f.slot.from,
      end: f.slot.to,
      timeslot_uuid: f.timeslotUuid,
      product_uuid: f.productUuid,
      email: `${unique('c')}@example.com`,
      firstname: 'Clara',
      lastname: 'Consumer',
      ...body,
    };
  }
});
