import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupBookable } from '../support/booking-fixtures.js';
import { sql } from '../support/booking-flow.js';
import { startTestApp, TEST_EPOCH, type TestApp } from '../support/harness.js';
import { unique } from '../support/http.js';
import { createAppointment, setupScheduling } from '../support/scheduling-fixtures.js';

/** Error cases of GraphQL operations that had only their happy path tested. */
describe('GraphQL error cases: cancelAppointment, createCustomer, upcomingBookables', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ clockAt: TEST_EPOCH });
  });
  afterAll(async () => app?.close());

  const codeOf = (res: { body: { errors?: { extensions?: { code?: string } }[] } }) => res.body.errors?.[0]?.extensions?.code;
  const messageOf = (res: { body: { errors?: { message?: string }[] } }) => res.body.errors?.[0]?.message;

  const CANCEL = `mutation ($p: String!, $a: String!, $m: String) { cancelAppointment(providerReference: $p, appointmentReference: $a, message: $m) { reference state } }`;

  it('cancelAppointment: no key, unknown provider or appointment, another CRM; nothing is cancelled', async () => {
    const f = await setupScheduling(app);
    const appointment = await createAppointment(f);
    const vars = { p: f.providerRef, a: appointment.reference };
    expect(codeOf(await app.anonymous.graphql(CANCEL, vars))).toBe('UNAUTHENTICATED');
    expect(codeOf(await f.api.graphql(CANCEL, { ...vars, p: 'no-such-provider' }))).toBe('NOT_FOUND');
    const unknown = await f.api.graphql(CANCEL, { ...vars, a: 'no-such-appointment' });
    expect(codeOf(unknown)).toBe('NOT_FOUND');
    const other = await app.newCrm();
    expect(codeOf(await other.api.graphql(CANCEL, vars))).toBe('NOT_FOUND');
    const wrongType = await f.api.graphql(CANCEL, { ...vars, m: 42 });
    expect(wrongType.status).toBe(400);
    expect(await sql(app, `select state from appointment where crm_id = ? and reference = ?`, [f.crmId, appointment.reference])).toEqual([{ state: 'ACTIVE' }]);
    // And the happy path still works, twice (idempotent).
    for (let i = 0; i < 2; i++) {
      const done = await f.api.graphql(CANCEL, { ...vars, m: 'Sorry' });
      expect(done.body.errors).toBeUndefined();
      expect(done.body.data.cancelAppointment).toEqual({ reference: appointment.reference, state: 'CANCELLED' });
    }
  });

  const CREATE_CUSTOMER = `mutation ($p: String!, $i: CustomerInput!) { createCustomer(providerReference: $p, input: $i) { customer { customerReference email } } }`;

  it('createCustomer: no key, unknown provider, provider mismatch, bad e-mail, missing or empty name; nothing is created', async () => {
    const f = await setupScheduling(app);
    const input = (extra: Record<string, unknown> = {}) => ({ customerReference: `c-${unique()}`, userName: 'Mia', email: 'mia@example.com', providerReference: f.providerRef, ...extra });
    expect(codeOf(await app.anonymous.graphql(CREATE_CUSTOMER, { p: f.providerRef, i: input() }))).toBe('UNAUTHENTICATED');
    expect(codeOf(await f.api.graphql(CREATE_CUSTOMER, { p: 'no-such-provider', i: input({ providerReference: 'no-such-provider' }) }))).toBe('NOT_FOUND');
    const mismatch = await f.api.graphql(CREATE_CUSTOMER, { p: f.providerRef, i: input({ providerReference: 'another' }) });
    expect(codeOf(mismatch)).toBe('VALIDATION_FAILED');
    expect(messageOf(mismatch)).toContain('providerReference');
    const badEmail = await f.api.graphql(CREATE_CUSTOMER, { p: f.providerRef, i: input({ email: 'not-an-address' }) });
    expect(codeOf(badEmail)).toBe('VALIDATION_FAILED');
    expect(messageOf(badEmail)).toContain('email');
    expect(codeOf(await f.api.graphql(CREATE_CUSTOMER, { p: f.providerRef, i: input({ userName: '' }) }))).toBe('VALIDATION_FAILED');
    const missing = await f.api.graphql(CREATE_CUSTOMER, { p: f.providerRef, i: { customerReference: 'x', providerReference: f.providerRef } });
    expect(missing.status).toBe(400);
    expect(codeOf(missing)).toBe('BAD_USER_INPUT');
    expect(await sql(app, `select 1 from customer where crm_id = ?`, [f.crmId])).toEqual([]);
  });

  const UPCOMING = `query ($r: String!, $refs: [String!], $from: String, $to: String, $g: String, $c: ChannelKey, $l: String) {
    upcomingBookables(ref: $r, refs: $refs, from: $from, to: $to, groupFormat: $g, channelKey: $c, languageTag: $l) { publicVisible groups { key } }
  }`;

  it('upcomingBookables: unknown resource, too many refs, bad window, bad pattern, bad channel', async () => {
    const f = await setupBookable(app);
    const ok = await app.anonymous.graphql(UPCOMING, { r: f.resourceUuid });
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data.upcomingBookables.publicVisible).toBe(true);
    expect(codeOf(await app.anonymous.graphql(UPCOMING, { r: 'no-such-resource@nowhere' }))).toBe('NOT_FOUND');
    const refs = await app.anonymous.graphql(UPCOMING, { r: f.resourceUuid, refs: Array.from({ length: 21 }, (_, i) => `r${i}`) });
    expect(codeOf(refs)).toBe('VALIDATION_FAILED');
    expect(messageOf(refs)).toContain('ref: at most 20');
    const reversed = await app.anonymous.graphql(UPCOMING, { r: f.resourceUuid, from: '2026-08-01T00:00', to: '2026-07-01T00:00' });
    expect(codeOf(reversed)).toBe('VALIDATION_FAILED');
    expect(codeOf(await app.anonymous.graphql(UPCOMING, { r: f.resourceUuid, from: 'yesterday' }))).toBe('VALIDATION_FAILED');
    expect(codeOf(await app.anonymous.graphql(UPCOMING, { r: f.resourceUuid, from: '2026-07-01T00:00', to: '2027-08-01T00:00' }))).toBe('VALIDATION_FAILED');
    const pattern = await app.anonymous.graphql(UPCOMING, { r: f.resourceUuid, g: 'yyyy-JJ' });
    expect(codeOf(pattern)).toBe('VALIDATION_FAILED');
    expect(messageOf(pattern)).toContain('groupFormat');
    // A channel outside ChannelKey is refused by GraphQL: 400 naming the enum, never a 500.
    const channel = await app.anonymous.graphql(UPCOMING, { r: f.resourceUuid, c: 'NOPE' });
    expect(channel.status).toBe(400);
    expect(codeOf(channel)).toBe('BAD_USER_INPUT');
    expect(messageOf(channel)).toContain('ChannelKey');
    expect((await app.anonymous.graphql(UPCOMING, { r: f.resourceUuid, c: 'RESOURCE_REFERENCE' })).body.errors).toBeUndefined();
    expect((await app.anonymous.graphql(UPCOMING, { r: 42 })).status).toBe(400);
  });
});
