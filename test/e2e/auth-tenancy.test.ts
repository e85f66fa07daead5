import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { rotateCrmKey } from '../../services/crm/crm.service.js';
import { User } from '../../services/users/user.entity.js';
import { setupProvider, type ProviderFixture } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { type ApiClient, apiClient, unique } from '../support/http.js';

const API_INFO = { version: '1' };
const errorBody = (message: unknown = expect.any(String)) => ({ 'api-info': API_INFO, errors: [{ errorCode: expect.any(String), message }] });

describe('Authentication, tenancy and error handling', () => {
  let app: TestApp;
  let first: { crmId: string; key: string; api: ApiClient };
  let second: { crmId: string; key: string; api: ApiClient };
  let fixture: ProviderFixture;

  beforeAll(async () => {
    app = await startTestApp();
    first = await app.newCrm();
    second = await app.newCrm();
    fixture = await setupProvider(first.api, first.crmId);
  });
  afterAll(async () => app?.close());

  const enc = encodeURIComponent;

  describe('the X-SERVICE-CLIENT-ID header', () => {
    it('401 without a key, with the error body', async () => {
      const res = await app.anonymous.get(`/crms/${first.crmId}/user/${enc(fixture.ownerRef)}`);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ 'api-info': API_INFO, errors: [{ errorCode: 'UNAUTHENTICATED', message: 'Missing X-SERVICE-CLIENT-ID header' }] });
      const post = await app.anonymous.post(`/crms/${first.crmId}/user`, { reference: 'x@y' });
      expect(post.status).toBe(401);
      const empty = await app.anonymous.get(`/crms/${first.crmId}/user/${enc(fixture.ownerRef)}`, { 'X-SERVICE-CLIENT-ID': '' });
      expect(empty.status).toBe(401);
    });

    it('401 for an unknown key (also an absurdly long one)', async () => {
      const res = await apiClient(app.baseUrl, 'bk_not-a-real-key').get(`/crms/${first.crmId}/provider/${enc(fixture.providerRef)}`);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ 'api-info': API_INFO, errors: [{ errorCode: 'UNAUTHENTICATED', message: 'Invalid X-SERVICE-CLIENT-ID' }] });
      const long = await apiClient(app.baseUrl, 'k'.repeat(5000)).get(`/crms/${first.crmId}/provider/${enc(fixture.providerRef)}`);
      expect(long.status).toBe(401);
    });

    it("403 for a valid key used on another CRM's path (and on an unknown crmId)", async () => {
      const res = await second.api.get(`/crms/${first.crmId}/user/${enc(fixture.ownerRef)}`);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ 'api-info': API_INFO, errors: [{ errorCode: 'FORBIDDEN', message: 'The key does not belong to this CRM' }] });
      const write = await second.api.post(`/crms/${first.crmId}/user`, { reference: 'x@y', email: 'x@example.com', username: 'x', lastName: 'X' });
      expect(write.status).toBe(403);
      expect((await second.api.get(`/crms/no-such-crm/user/${enc(fixture.ownerRef)}`)).status).toBe(403);
    });

    it('rotation: after rotateCrmKey the old key answers 401 and the new one works', async () => {
      const crm = await app.newCrm();
      const path = `/crms/${crm.crmId}/user/${enc('nobody@crm')}`;
      expect((await crm.api.get(path)).status).toBe(404);
      const newKey = await rotateCrmKey(app.orm.em.fork(), crm.crmId);
      expect(newKey).not.toBe(crm.key);
      expect((await crm.api.get(path)).status).toBe(401);
      expect((await apiClient(app.baseUrl, newKey).get(path)).status).toBe(404);
    });

    it('GraphQL: no key is UNAUTHENTICATED, an unknown key is HTTP 401, a rotated key stops working', async () => {
      const query = `query ($r: String!) { user(reference: $r) { email } }`;
      const anonymous = await app.anonymous.graphql(query, { r: fixture.ownerRef });
      // user is nullable, so the error nulls the field; the error says why.
      expect(anonymous.body.data).toEqual({ user: null });
      expect(anonymous.body.errors![0].extensions.code).toBe('UNAUTHENTICATED');

      const unknown = await apiClient(app.baseUrl, 'bk_wrong').graphql(query, { r: fixture.ownerRef });
      expect(unknown.status).toBe(401);
      expect(unknown.body.errors![0].extensions.code).toBe('UNAUTHENTICATED');

      const crm = await app.newCrm();
      expect((await crm.api.graphql(query, { r: 'nobody@crm' })).body).toEqual({ data: { user: null } });
      await rotateCrmKey(app.orm.em.fork(), crm.crmId);
      expect((await crm.api.graphql(query, { r: 'nobody@crm' })).status).toBe(401);
    });

    it('GraphQL over WebSocket takes the key from connectionParams', async () => {
      const url = `${app.baseUrl.replace(/^http/, 'ws')}/graphql`;
      const run = (key: string | undefined) => {
        const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true, connectionParams: key ? { 'X-SERVICE-CLIENT-ID': key } : {} });
        return new Promise<{ data?: any; errors?: any }>((resolve, reject) => {
          let result: { data?: any; errors?: any } = {};
          client.subscribe(
            { query: `query ($r: String!) { user(reference: $r) { reference } }`, variables: { r: fixture.ownerRef } },
            { next: (value) => (result = value as typeof result), error: reject, complete: () => resolve(result) },
          );
        }).finally(() => client.dispose());
      };
      expect((await run(first.key)).data.user.reference).toBe(fixture.ownerRef);
      const other = await run(second.key);
      // For the second CRM the first one's user does not exist: null.
      expect(other).toEqual({ data: { user: null } });
      await expect(run('bk_wrong')).rejects.toBeTruthy();
    });
  });

  describe('tenancy: a second CRM cannot see or change the first one\'s data', () => {
    it('REST: user, account, provider and staff answer 404 for the second CRM', async () => {
      const base = `/crms/${second.crmId}`;
      for (const path of [
        `${base}/user/${enc(fixture.ownerRef)}`,
        `${base}/account/${enc(fixture.accountRef)}`,
        `${base}/provider/${enc(fixture.providerRef)}`,
        `${base}/provider/${enc(fixture.providerRef)}/staff`,
      ]) {
        const res = await second.api.get(path);
        expect(res.status, path).toBe(404);
        expect(res.body).toEqual(errorBody());
        // The same path works for the owner.
        expect((await first.api.get(path.replace(base, `/crms/${first.crmId}`))).status, path).toBe(200);
      }
    });

    it("REST: writes that name the first CRM's references fail as if they were unknown", async () => {
      const base = `/crms/${second.crmId}`;
      const account = await second.api.post(`${base}/account`, {
        ownerReference: fixture.ownerRef,
        accountReference: `${unique('acc')}@crm`,
        branch: 'misc',
      });
      expect(account.status).toBe(404);
      expect(account.body.errors![0].message).toBe('no user found for ownerReference');

      const staff = await second.api.post(`${base}/provider/${enc(fixture.providerRef)}/staff`, { userReference: fixture.ownerRef });
      expect(staff.status).toBe(404);
      const removal = await second.api.delete(`${base}/provider/${enc(fixture.providerRef)}/staff/${enc(fixture.ownerRef)}`);
      expect(removal.status).toBe(404);

      // The same reference and e-mail in the second CRM make a separate user; the first CRM's user is untouched.
      // (Its own fixture, so the other tenancy tests still see the reference as unknown to the second CRM.)
      const shared = await setupProvider(first.api, first.crmId);
      const own = await second.api.post(`${base}/user`, {
        reference: shared.ownerRef,
        email: shared.email,
        username: `copy-${unique()}`,
        lastName: 'Copy',
      });
      expect(own.status).toBe(201);
      expect(own.body.user.email).toBe(shared.email);
      const original = await first.api.get(`/crms/${first.crmId}/user/${enc(shared.ownerRef)}`);
      expect(original.body.user.lastName).toBe('Owner');
      expect(await app.orm.em.fork().count(User, { reference: shared.ownerRef })).toBe(2);
    });

    it('GraphQL: user, account and provider answer null, staff NOT_FOUND for the second CRM', async () => {
      const queries: Array<[string, Record<string, string>, string]> = [
        ['query ($r: String!) { user(reference: $r) { email } }', { r: fixture.ownerRef }, 'user'],
        ['query ($r: String!) { account(reference: $r) { branch } }', { r: fixture.accountRef }, 'account'],
        ['query ($r: String!) { provider(reference: $r) { uuid } }', { r: fixture.providerRef }, 'provider'],
        ['query ($r: String!) { staff(providerReference: $r) { email } }', { r: fixture.providerRef }, 'staff'],
      ];
      for (const [query, variables, field] of queries) {
        const res = await second.api.graphql(query, variables);
        if (field === 'staff') expect(res.body.errors?.[0]?.extensions?.code, query).toBe('NOT_FOUND');
        else expect(res.body, query).toEqual({ data: { [field]: null } });
        const own = await first.api.graphql(query, variables);
        expect(own.body.errors, query).toBeUndefined();
        expect(own.body.data[field], query).not.toBeNull();
      }
      const add = await second.api.graphql(
        'mutation ($p: String!, $u: String!) { addStaffMember(providerReference: $p, userReference: $u) { email } }',
        { p: fixture.providerRef, u: fixture.ownerRef },
      );
      expect(add.body.errors![0].extensions.code).toBe('NOT_FOUND');
      const remove = await second.api.graphql('mutation ($p: String!, $u: String!) { removeStaffMember(providerReference: $p, userReference: $u) }', {
        p: fixture.providerRef,
        u: fixture.ownerRef,
      });
      expect(remove.body.errors![0].extensions.code).toBe('NOT_FOUND');
    });
  });

  describe('bad input never gives a 500', () => {
    it('malformed JSON is a 400 with the error body', async () => {
      const res = await first.api.request('POST', `/crms/${first.crmId}/user`, '{"reference": "a@b",', { 'content-type': 'application/json' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ 'api-info': API_INFO, errors: [{ errorCode: 'VALIDATION_FAILED', message: 'Malformed JSON in request body' }] });
      const graphql = await first.api.request('POST', '/graphql', '{"query": ', { 'content-type': 'application/json' });
      expect(graphql.status).toBe(400);
    });

    it('wrong types give a 400 naming the field', async () => {
      const email = await first.api.post(`/crms/${first.crmId}/user`, { reference: 'a@b', email: 12, username: 'u', lastName: 'L' });
      expect(email.status).toBe(400);
      expect(email.body).toEqual(errorBody('email must be a string, got number'));
      const array = await first.api.post(`/crms/${first.crmId}/account`, [1, 2]);
      expect(array.status).toBe(400);
      expect(array.body).toEqual(errorBody('body must be an object, got array'));
      const scalar = await first.api.request('POST', `/crms/${first.crmId}/provider`, '"just a string"', { 'content-type': 'application/json' });
      expect(scalar.status).toBe(400);
      const noBody = await first.api.request('POST', `/crms/${first.crmId}/user`, undefined);
      expect(noBody.status).toBe(400);
      expect(noBody.body).toEqual(errorBody('body is required'));
      const textPlain = await first.api.request('POST', `/crms/${first.crmId}/user`, '{}', { 'content-type': 'text/plain' });
      expect(textPlain.status).toBe(400);
    });

    it('an unknown path is a 404 JSON error body', async () => {
      for (const [method, path] of [
        ['GET', '/nope'],
        ['GET', `/crms/${first.crmId}/nothing`],
        ['PUT', `/crms/${first.crmId}/user`],
        ['POST', `/crms/${first.crmId}/user/extra/segments`],
      ] as const) {
        const res = await first.api.request(method, path, method === 'GET' ? undefined : {});
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.headers.get('content-type')).toContain('application/json');
        expect(res.body).toEqual(errorBody(expect.stringContaining(path)));
      }
    });

    it('a body over the limit is a 413, not a 500', async () => {
      const res = await first.api.post(`/crms/${first.crmId}/user`, { reference: 'x@y', lastName: 'x'.repeat(1_100_000) });
      expect(res.status).toBe(413);
      expect(res.body).toEqual(errorBody());
    });

    it('fuzzed bodies on every setup endpoint answer 4xx', async () => {
      const base = `/crms/${first.crmId}`;
      const bodies: unknown[] = [
        {},
        [],
        [{}],
        null,
        0,
        true,
        { reference: {}, email: [], username: 1, lastName: false },
        { reference: 'x'.repeat(300), email: 'a@b.de', username: 'y', lastName: 'z' },
        { reference: 'a@b', email: `${'x'.repeat(400)}@example.com`, username: 'y', lastName: 'z' },
        { ownerReference: fixture.ownerRef, accountReference: 'a@b', branch: 'misc', invoiceAddress: [] },
        { ownerReference: fixture.ownerRef, accountReference: 'a@b', branch: 'misc', invoiceTaxId: 'x'.repeat(100) },
        { reference: 'p@x', ownerReference: fixture.ownerRef, accountReference: fixture.accountRef, name: 'n', timeZone: 5 },
        { reference: 'p@x', ownerReference: fixture.ownerRef, accountReference: fixture.accountRef, name: 'n', language: 'fr' },
        { userReference: ['a'] },
        { __proto__: { polluted: true }, constructor: { prototype: {} } },
        { a: { b: { c: { d: { e: { f: { g: { h: {} } } } } } } } },
        { reference: 'nul\u0000@crm', email: 'nul@example.com', username: 'nul\u0000', lastName: 'N\u0000' },
        { ownerReference: 'nul\u0000@crm', accountReference: 'a\u0000@b', branch: 'misc' },
        { reference: 'p\u0000@x', ownerReference: fixture.ownerRef, accountReference: fixture.accountRef, name: 'n\u0000' },
        { userReference: 'nul\u0000@crm' },
      ];
      const paths = [`${base}/user`, `${base}/account`, `${base}/provider`, `${base}/provider/${enc(fixture.providerRef)}/staff`];
      for (const path of paths) {
        for (const body of bodies) {
          const res = await first.api.request('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });
          expect(res.status, `${path} ${JSON.stringify(body)} -> ${res.text}`).toBeGreaterThanOrEqual(400);
          expect(res.status, `${path} ${JSON.stringify(body)} -> ${res.text}`).toBeLessThan(500);
          expect(res.body).toEqual(errorBody());
        }
      }
    });

    it('odd path parameters answer 404, not 500', async () => {
      for (const reference of ['%E0%A4%A', '%00', '..', '%2e%2e%2f', 'x'.repeat(5000)]) {
        const res = await first.api.get(`/crms/${first.crmId}/user/${reference}`);
        expect(res.status, reference).toBeGreaterThanOrEqual(400);
        expect(res.status, reference).toBeLessThan(500);
      }
    });
  });
});
