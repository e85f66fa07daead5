import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MailTransport, OutgoingMail } from '../../services/mail/mail-transport.js';
import { setupProvider } from '../support/fixtures.js';
import { startTestApp, TEST_EPOCH, type TestApp } from '../support/harness.js';
import { unique } from '../support/http.js';
import { isolatedDatabase } from '../support/isolated-database.js';
import { enc } from '../support/offerings-fixtures.js';
import {
  addParticipation,
  createAppointment,
  createCustomer,
  mailRowsOfParticipation,
  setupScheduling,
  type SchedulingFixture,
  sql,
} from '../support/scheduling-fixtures.js';

const API_INFO = { version: '1' };

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every text and JSON column of every table of the schema, with the rows whose value contains one of the needles. */
async function findPersonalData(app: TestApp, needles: string[]): Promise<string[]> {
  const columns = await sql<{ table_name: string; column_name: string }>(
    app,
    `select table_name, column_name from information_schema.columns
      where table_schema = current_schema() and data_type in ('text', 'character varying', 'character', 'json', 'jsonb')
      order by table_name, column_name`,
  );
  expect(columns.length).toBeGreaterThan(20);
  const hits: string[] = [];
  for (const { table_name, column_name } of columns) {
    const rows = await sql<{ n: string }>(
      app,
      `select count(*) as n from "${table_name}" where ${needles.map(() => `position(lower(?) in lower("${column_name}"::text)) > 0`).join(' or ')}`,
      needles,
    );
    if (Number(rows[0]!.n) > 0) hits.push(`${table_name}.${column_name}`);
  }
  return hits;
}

describe('scheduling: customers (REST)', () => {
  let app: TestApp;
  let f: SchedulingFixture;

  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  beforeAll(async () => {
    // Its own database: the erasure test later runs a worker, which relays every pending outbox row of the database.
    database = await isolatedDatabase(unique('customers'));
    app = await startTestApp({ config: { databaseUrl: database.url }, clockAt: TEST_EPOCH });
    f = await setupScheduling(app);
  });
  afterAll(async () => {
    await app?.close();
    await database?.drop();
  });

  const path = (reference: string) => `${f.base}/customers/${enc(reference)}`;
  const body = (overrides: Record<string, unknown> = {}) => ({
    customerReference: `customer-${unique()}@test`,
    providerReference: f.providerRef,
    userName: 'Carla Customer',
    ...overrides,
  });

  describe('get', () => {
    it('answers the wrapped customer (200), absent values null', async () => {
      const created = body();
      expect((await f.api.post(`${f.base}/customers`, created)).status).toBe(201);
      const res = await f.api.get(path(created.customerReference));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        'api-info': API_INFO,
        customer: {
          customerReference: created.customerReference,
          email: null,
          note: null,
          userName: 'Carla Customer',
          mobile: null,
          language: null,
          providerReference: f.providerRef,
        },
      });
    });

    it('answers 204 with an empty body for an unknown reference', async () => {
      const res = await f.api.get(path('no-such-customer'));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
    });
  });

  describe('create', () => {
    it('creates with 201 and all fields; the same reference again answers 200 with the existing customer unchanged', async () => {
      const created = body({ email: 'Carla@Example.com', mobile: '+49 170 1234567', note: 'n'.repeat(1023), language: 'en' });
      const res = await f.api.post(`${f.base}/customers`, created);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        'api-info': API_INFO,
        customer: {
          customerReference: created.customerReference,
          email: 'carla@example.com',
          note: 'n'.repeat(1023),
          userName: 'Carla Customer',
          mobile: '+49 170 1234567',
          language: 'en',
          providerReference: f.providerRef,
        },
      });
      const again = await f.api.post(`${f.base}/customers`, { ...created, userName: 'Somebody Else', email: null });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(res.body);
    });

    it.each(['customerReference', 'providerReference', 'userName'])('names the missing required field %s (400)', async (field) => {
      const created: Record<string, unknown> = body();
      delete created[field];
      const res = await f.api.post(`${f.base}/customers`, created);
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toEqual({ errorCode: 'VALIDATION_FAILED', message: `${field} is required` });
    });

    it.each([
      [{ userName: '' }, 'userName must not be empty'],
      [{ customerReference: '   ' }, 'customerReference must not be empty'],
      [{ note: 'n'.repeat(1024) }, 'note must be at most 1023 characters'],
      [{ mobile: '0170 1234567' }, 'mobile must be a phone number with international prefix'],
      [{ email: 'not-an-address' }, 'email must be a valid e-mail address'],
      [{ language: 'german' }, 'language must be a language code'],
      [{ providerReference: 'another-provider' }, 'providerReference must be'],
    ])('refuses %j with 400', async (override, message) => {
      const res = await f.api.post(`${f.base}/customers`, body(override));
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toContain(message);
    });

    it('refuses (409) a reference another provider of the same CRM uses', async () => {
      const created = body();
      expect((await f.api.post(`${f.base}/customers`, created)).status).toBe(201);
      const other = await setupProvider(f.api, f.crmId);
      const res = await f.api.post(`/crms/${f.crmId}/provider/${enc(other.providerRef)}/customers`, { ...created, providerReference: other.providerRef });
      expect(res.status).toBe(409);
      expect(res.body.errors[0].message).toContain('already used by another provider');
    });
  });

  describe('update', () => {
    it('changes only the supplied fields (200, wrapped); the reference may change', async () => {
      const created = body({ email: 'old@example.com', mobile: '+49 170 1111111', note: 'keep' });
      await f.api.post(`${f.base}/customers`, created);
      const newReference = `renamed-${unique()}@test`;
      const res = await f.api.put(path(created.customerReference), { customerReference: newReference, email: 'new@example.com' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        'api-info': API_INFO,
        customer: {
          customerReference: newReference,
          email: 'new@example.com',
          note: 'keep',
          userName: 'Carla Customer',
          mobile: '+49 170 1111111',
          language: null,
          providerReference: f.providerRef,
        },
      });
      expect((await f.api.get(path(created.customerReference))).status).toBe(204);
      expect((await f.api.get(path(newReference))).body.customer.email).toBe('new@example.com');
      const cleared = await f.api.put(path(newReference), { mobile: null, note: '', userName: 'Carla C.' });
      expect(cleared.status).toBe(200);
      expect(cleared.body.customer).toMatchObject({ mobile: null, note: '', userName: 'Carla C.', email: 'new@example.com' });
    });

    it.each([
      [{ customerReference: null }, 'customerReference is required'],
      [{ customerReference: '' }, 'customerReference must not be empty'],
      [{ userName: null }, 'userName is required'],
      [{ userName: ' ' }, 'userName must not be empty'],
      [{ note: 'x'.repeat(1024) }, 'note must be at most 1023 characters'],
      [{ mobile: '01701234567' }, 'mobile must be a phone number with international prefix'],
      [{ mobile: '+0 170 1234567' }, 'mobile must be a phone number with international prefix'],
    ])('refuses %j with 400 and changes nothing', async (change, message) => {
      const created = body({ mobile: '+49 170 2222222' });
      await f.api.post(`${f.base}/customers`, created);
      const res = await f.api.put(path(created.customerReference), change);
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toEqual({ errorCode: 'VALIDATION_FAILED', message: expect.stringContaining(message) });
      expect((await f.api.get(path(created.customerReference))).body.customer).toMatchObject({ userName: 'Carla Customer', mobile: '+49 170 2222222' });
    });

    it('refuses a reference that another customer has (409) and answers 404 for an unknown customer', async () => {
      const a = body();
      const b = body();
      await f.api.post(`${f.base}/customers`, a);
      await f.api.post(`${f.base}/customers`, b);
      const res = await f.api.put(path(a.customerReference), { customerReference: b.customerReference });
      expect(res.status).toBe(409);
      expect((await f.api.put(path('no-such-customer'), { userName: 'x' })).status).toBe(404);
    });
  });

  describe('delete', () => {
    it('erases a customer without future appointments (204); afterwards get answers 204', async () => {
      const reference = await createCustomer(f);
      const res = await f.api.delete(path(reference));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect((await f.api.get(path(reference))).status).toBe(204);
      expect((await f.api.delete(path(reference))).status).toBe(404);
    });

    it('is refused (409) while the customer takes part in a future appointment; past and cancelled ones do not count', async () => {
      const customerReference = await createCustomer(f);
      const past = await createAppointment(f, { start: '2020-03-02T10:00', end: '2020-03-02T11:00' });
      await addParticipation(f, past.reference, { customerReference, query: 'sendMails=false' });
      const cancelledLater = await createAppointment(f, { start: '2027-09-01T10:00', end: '2027-09-01T11:00' });
      const canceledPlace = await addParticipation(f, cancelledLater.reference, { customerReference, query: 'sendMails=false' });
      await f.api.post(`${f.base}/participations/${enc(canceledPlace.reference)}?sendMails=false`, { state: 'CANCELED' });
      const future = await createAppointment(f, { start: '2027-09-02T10:00', end: '2027-09-02T11:00' });
      const booked = await addParticipation(f, future.reference, { customerReference, query: 'sendMails=false' });

      const refused = await f.api.delete(path(customerReference));
      expect(refused.status).toBe(409);
      expect(refused.body.errors[0]).toEqual({ errorCode: 'HAS_FUTURE_APPOINTMENTS', message: expect.stringContaining('ignoreFutureAppointments') });
      expect((await f.api.get(path(customerReference))).status).toBe(200);

      // Without that booking the customer could go.
      await f.api.post(`${f.base}/participations/${enc(booked.reference)}?sendMails=false`, { state: 'CANCELED' });
      expect((await f.api.delete(path(customerReference))).status).toBe(204);
    });

    it('with ignoreFutureAppointments removes the customer from future appointments, writes the mail and keeps the history anonymised', async () => {
      const customerReference = await createCustomer(f, { userName: 'Fiona Future', email: 'fiona@example.com' });
      const future = await createAppointment(f, { start: '2027-10-01T10:00', end: '2027-10-01T11:00', capacity: 1 });
      const place = await addParticipation(f, future.reference, { customerReference, query: 'sendMails=false' });
      expect(await mailRowsOfParticipation(app, f.crmId, place.reference)).toEqual([]);

      const res = await f.api.delete(`${path(customerReference)}?ignoreFutureAppointments`);
      expect(res.status).toBe(204);
      const mails = await mailRowsOfParticipation(app, f.crmId, place.reference);
      expect(mails).toHaveLength(1);
      // Either still pending (carrying its own recipient, marked personal) or already handed over and scrubbed.
      if (mails[0]!.dispatched_at === null) {
        expect(mails[0]!.payload).toMatchObject({
          template: 'participation-canceled',
          recipient: { email: 'fiona@example.com', name: 'Fiona Future' },
          personal: true,
        });
      } else {
        expect(mails[0]!.payload).toEqual({ erased: true });
      }

      const listed = (await f.api.get(`${f.base}/appointments`)).body.find((a: { reference: string }) => a.reference === future.reference);
      expect(listed.participations).toEqual([
        { reference: place.reference, customerReference: null, name: 'erased', email: null, mobile: null, note: null, state: 'CANCELED', messages: null },
      ]);
      // The place is free again.
      expect((await addParticipation(f, future.reference, { query: 'sendMails=false' })).res.status).toBe(201);
    });
  });

  it('GDPR: after the deletion and the dispatch of the outbox no table holds the name, e-mail or mobile', async () => {
    const g = await setupScheduling(app);
    const id = unique();
    const name = `Zora Gdprtest ${id}`;
    const email = `zora.${id}@example.com`;
    const mobile = `+49 151 ${String(Date.now()).slice(-7)}`;
    const customerReference = await createCustomer(g, { userName: name, email, mobile, note: `Call ${name} first`, language: 'de' });
    const past = await createAppointment(g, { start: '2020-05-04T10:00', end: '2020-05-04T11:00' });
    const future = await createAppointment(g, { start: '2027-11-02T10:00', end: '2027-11-02T11:00' });
    const cancelled = await createAppointment(g, { start: '2027-11-03T10:00', end: '2027-11-03T11:00' });
    expect((await addParticipation(g, past.reference, { customerReference, message: `Thanks, ${name}!` })).res.status).toBe(201);
    expect((await addParticipation(g, future.reference, { customerReference, message: `See you, ${name} (${mobile})` })).res.status).toBe(201);
    expect((await addParticipation(g, cancelled.reference, { customerReference, message: `Hello ${email}` })).res.status).toBe(201);
    expect((await g.api.delete(`${g.base}/appointments?message=${enc('Cancelled, sorry')}`, { appointmentReference: cancelled.reference })).status).toBe(200);

    const needles = [name, email, mobile];
    // The search itself works: before the deletion it finds the customer, the messages and the mail rows.
    expect(await findPersonalData(app, needles)).toEqual(
      expect.arrayContaining(['customer.user_name', 'customer.email', 'customer.mobile', 'customer.note', 'participation.messages', 'outbox_message.payload']),
    );

    expect((await g.api.delete(`${g.base}/customers/${enc(customerReference)}?ignoreFutureAppointments=true`)).status).toBe(204);
    const mailIds = (
      await sql<{ id: string }>(app, `select o.id from outbox_message o join appointment a on a.id::text = o.payload->'params'->>'appointmentId' where o.kind = 'mail' and a.crm_id = ?`, [
        g.crmId,
      ])
    ).map((row) => String(row.id));
    expect(mailIds.length).toBeGreaterThanOrEqual(4);

    // Now the worker relays the outbox and delivers (or skips) the mails.
    const sent: OutgoingMail[] = [];
    const transport: MailTransport = {
      async send(mail) {
        sent.push(mail);
        return { messageId: mail.messageId };
      },
      close() {},
    };
    const worker = await startTestApp({ clockAt: TEST_EPOCH, config: { databaseUrl: app.config.databaseUrl }, worker: { transport, relayPollMs: 200 } });
    try {
      const [{ last }] = await sql<{ last: string }>(app, 'select max(id) as last from outbox_message');
      await waitFor(async () => {
        const [{ pending }] = await sql<{ pending: string }>(app, 'select count(*) as pending from outbox_message where dispatched_at is null and id <= ?', [last]);
        return Number(pending) === 0;
      }, 'outbox rows still pending');
      await waitFor(async () => {
        const settled = await sql(app, `select id from mail_delivery where status in ('SENT', 'SKIPPED', 'FAILED') and id in (${mailIds.map(() => '?').join(',')})`, mailIds);
        return settled.length === mailIds.length;
      }, 'mails not yet delivered or skipped');
    } finally {
      await worker.close();
    }

    expect(await findPersonalData(app, needles)).toEqual([]);
    // The customer was told (the farewell mail carries its own recipient); the mails queued before the deletion were not sent.
    expect(sent.filter((mail) => mail.to.includes(email))).toHaveLength(1);
    // The booking history stays, anonymised.
    const history = await sql<{ state: string; customer_id: string | null }>(
      app,
      `select p.state, p.customer_id from participation p join appointment a on a.id = p.appointment_id where a.crm_id = ? order by a.start`,
      [g.crmId],
    );
    expect(history.map((h) => h.state)).toEqual(['BOOKED', 'CANCELED', 'CANCELED']);
    expect(history.every((h) => h.customer_id !== null)).toBe(true);
  });

  it("gives another CRM 404 for this CRM's provider and customers", async () => {
    const reference = await createCustomer(f);
    const { crmId, api } = await app.newCrm();
    const other = `/crms/${crmId}/provider/${enc(f.providerRef)}/customers`;
    expect((await api.get(`${other}/${enc(reference)}`)).status).toBe(404);
    expect((await api.post(other, body())).status).toBe(404);
    expect((await api.put(`${other}/${enc(reference)}`, { userName: 'x' })).status).toBe(404);
    expect((await api.delete(`${other}/${enc(reference)}`)).status).toBe(404);
    expect((await f.api.get(path(reference))).status).toBe(200);
  });
});
