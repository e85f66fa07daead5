import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_EPOCH, type TestApp } from '../support/harness.js';
import { unique } from '../support/http.js';
import { createCustomer, mailRowsOfParticipation, setupScheduling, type SchedulingFixture, sql } from '../support/scheduling-fixtures.js';

const APPOINTMENT = `reference archived capacity participations { reference customerReference state name email mobile note }`;
const CREATE_APPOINTMENT = `mutation($p: String!, $i: AppointmentInput!) { createAppointment(providerReference: $p, input: $i) { ${APPOINTMENT} } }`;
const SAVE_RESOURCE = `mutation($p: String!, $i: ResourceInput!) { saveResource(providerReference: $p, input: $i) { created resource { reference archived } } }`;

/** Issue 11, item 1: fields the spec names on create are never silently dropped. */
describe('single-appointment create with participations; archived on create', () => {
  let app: TestApp;
  let f: SchedulingFixture;

  beforeAll(async () => {
    app = await startTestApp({ clockAt: TEST_EPOCH });
    f = await setupScheduling(app);
  });
  afterAll(async () => app?.close());

  const body = (overrides: Record<string, unknown> = {}) => ({
    reference: `appointment-${unique()}@test`,
    start: '2027-03-01T10:00',
    end: '2027-03-01T11:00',
    resourceReference: f.resourceRef,
    productReference: f.productRef,
    capacity: 2,
    ...overrides,
  });
  const participant = (overrides: Record<string, unknown> = {}) => ({
    reference: `participation-${unique()}@test`,
    name: 'Paula Participant',
    email: `${unique('paula')}@example.com`,
    state: 'BOOKED',
    ...overrides,
  });
  const countOf = async (table: 'appointment' | 'participation' | 'customer') =>
    Number((await sql<{ n: string }>(app, `select count(*) as n from ${table} where crm_id = ?`, [f.crmId]))[0]!.n);

  it('creates them (REST): a new customer per unknown e-mail, the existing customer for a known one, mails of the new state', async () => {
    const knownReference = await createCustomer(f, { userName: 'Kurt Known', email: 'kurt.known@example.com' });
    const fresh = participant({ mobile: '+49 170 1234567', note: 'wheelchair' });
    const known = participant({ name: 'Kurt K.', email: 'Kurt.Known@example.com', state: 'REQUESTED' });
    const res = await f.api.post(`${f.base}/appointments`, body({ participations: [fresh, known] }));
    expect(res.status, res.text).toBe(201);
    expect(res.body.appointment.participations).toEqual([
      {
        reference: fresh.reference,
        customerReference: expect.any(String),
        email: fresh.email,
        mobile: '+49 170 1234567',
        name: 'Paula Participant',
        note: 'wheelchair',
        state: 'BOOKED',
        messages: null,
      },
      // The known customer keeps the CRM's name.
      { reference: known.reference, customerReference: knownReference, email: 'kurt.known@example.com', mobile: null, name: 'Kurt Known', note: null, state: 'REQUESTED', messages: null },
    ]);
    const listed = (await f.api.get(`${f.base}/appointments`)).body.find((a: { reference: string }) => a.reference === res.body.appointment.reference);
    expect(listed.participations.map((p: { reference: string; state: string }) => [p.reference, p.state])).toEqual([
      [fresh.reference, 'BOOKED'],
      [known.reference, 'REQUESTED'],
    ]);
    expect((await mailRowsOfParticipation(app, f.crmId, fresh.reference)).map((m) => m.payload.template)).toEqual(['participation-booked']);
    expect((await mailRowsOfParticipation(app, f.crmId, known.reference)).map((m) => m.payload.template)).toEqual(['booking-request-received']);
    // The participation is addressable like any other.
    const canceled = await f.api.post(`${f.base}/participations/${encodeURIComponent(fresh.reference)}`, { state: 'CANCELED' });
    expect(canceled.status).toBe(200);
  });

  it('refuses an invalid participation with a 400 naming the field, and creates nothing', async () => {
    const before = await Promise.all([countOf('appointment'), countOf('participation'), countOf('customer')]);
    const cases: [Record<string, unknown>[], string][] = [
      [[participant({ reference: undefined })], 'participations[0].reference is required'],
      [[participant(), participant({ name: '' })], 'participations[1].name must not be empty'],
      [[participant({ email: 'not-an-email' })], 'participations[0].email must be a valid e-mail address'],
      [[participant({ state: 'CONFIRMED' })], 'participations[0].state must be one of RESERVED, REQUESTED, BOOKED, CANCELED, DELETED'],
      [[participant({ mobile: 'call me' })], 'participations[0].mobile'],
    ];
    for (const [participations, message] of cases) {
      const res = await f.api.post(`${f.base}/appointments`, body({ participations }));
      expect(res.status).toBe(400);
      expect(res.body.errors[0].errorCode).toBe('VALIDATION_FAILED');
      expect(res.body.errors[0].message).toContain(message);
    }
    const twice = participant();
    const duplicate = await f.api.post(`${f.base}/appointments`, body({ participations: [twice, { ...twice, email: 'other@example.com' }] }));
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.errors[0].message).toContain('participations[1].reference');
    expect(await Promise.all([countOf('appointment'), countOf('participation'), countOf('customer')])).toEqual(before);
  });

  it('applies the capacity rule of POST participations: a full appointment refuses the next place (409) and nothing is created', async () => {
    const before = await Promise.all([countOf('appointment'), countOf('participation'), countOf('customer')]);
    const res = await f.api.post(`${f.base}/appointments`, body({ capacity: 1, participations: [participant(), participant({ state: 'REQUESTED' })] }));
    expect(res.status).toBe(409);
    expect(res.body.errors[0].errorCode).toBe('CAPACITY_EXHAUSTED');
    expect(res.body.errors[0].message).toMatch(/^participations\[1\]: /);
    expect(await Promise.all([countOf('appointment'), countOf('participation'), countOf('customer')])).toEqual(before);
    // States that take no place need none.
    const quiet = await f.api.post(`${f.base}/appointments`, body({ participations: [participant({ state: 'CANCELED' })] }));
    expect(quiet.status).toBe(201);
    expect(quiet.body.appointment.capacity).toBe(2);
  });

  it('keeps archived on appointment create (REST)', async () => {
    const res = await f.api.post(`${f.base}/appointments`, body({ archived: true }));
    expect(res.status).toBe(201);
    expect(res.body.appointment.archived).toBe(true);
  });

  it('GraphQL createAppointment takes participations and archived the same way', async () => {
    const p = participant();
    const res = await f.api.graphql(CREATE_APPOINTMENT, { p: f.providerRef, i: { ...body({ archived: true }), participations: [p] } });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.createAppointment).toMatchObject({
      archived: true,
      participations: [{ reference: p.reference, state: 'BOOKED', name: 'Paula Participant', email: p.email, mobile: null, note: null }],
    });
    const bad = await f.api.graphql(CREATE_APPOINTMENT, { p: f.providerRef, i: { ...body(), participations: [participant({ reference: '' })] } });
    expect(bad.body.errors?.[0]?.extensions.code).toBe('VALIDATION_FAILED');
    expect(bad.body.errors?.[0]?.message).toBe('participations[0].reference must not be empty');
  });

  it('honours archived on resource create (REST and GraphQL)', async () => {
    const reference = `resource-${unique()}@test`;
    const created = await f.api.post(`${f.base}/resources`, { reference, publicName: 'Flat', internalName: 'flat', archived: true });
    expect(created.status).toBe(201);
    expect(created.body.resource ?? created.body).toMatchObject({ archived: true });
    const listed = (await f.api.get(`${f.base}/resources`)).body;
    const list = Array.isArray(listed) ? listed : listed.resources;
    expect(list.find((r: { reference: string }) => r.reference === reference).archived).toBe(true);

    const viaGraphql = await f.api.graphql(SAVE_RESOURCE, { p: f.providerRef, i: { reference: `resource-${unique()}@test`, publicName: 'Flat', internalName: 'flat', archived: true } });
    expect(viaGraphql.body.errors).toBeUndefined();
    expect(viaGraphql.body.data.saveResource).toMatchObject({ created: true, resource: { archived: true } });
  });
});
