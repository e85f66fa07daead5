import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Provider } from '../../services/providers/provider.entity.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { type ApiClient, unique } from '../support/http.js';

const API_INFO = { version: '1' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const errorBody = (message: unknown) => ({ 'api-info': API_INFO, errors: [{ errorCode: expect.any(String), message }] });

const PROVIDER_FIELDS = 'uuid reference name email mobile phone impressum branch subbranch';
const USER_FIELDS = 'reference email username firstName lastName phone mobile';
const CREATE_PROVIDER = `mutation ($input: CreateProviderInput!) { createProvider(input: $input) { created provider { ${PROVIDER_FIELDS} } } }`;
const PROVIDER_QUERY = `query ($reference: String!) { provider(reference: $reference) { ${PROVIDER_FIELDS} } }`;
const STAFF_QUERY = `query ($providerReference: String!) { staff(providerReference: $providerReference) { ${USER_FIELDS} } }`;
const ADD_STAFF = `mutation ($providerReference: String!, $userReference: String!) {
  addStaffMember(providerReference: $providerReference, userReference: $userReference) { ${USER_FIELDS} } }`;
const REMOVE_STAFF = `mutation ($providerReference: String!, $userReference: String!) {
  removeStaffMember(providerReference: $providerReference, userReference: $userReference) }`;

interface UserFixture {
  reference: string;
  email: string;
  username: string;
  firstName: string | null;
  lastName: string;
  phone: string | null;
  mobile: string | null;
}

describe('Setup: providers and staff', () => {
  let app: TestApp;
  let api: ApiClient;
  let crmId: string;
  let owner: UserFixture;
  let accountRef: string;

  const createUser = async (extra: Record<string, unknown> = {}): Promise<UserFixture> => {
    const id = unique('staff');
    const body = { reference: `${id}@crm`, email: `${id}@example.com`, username: id, lastName: 'Staff', ...extra };
    const res = await api.post(`/crms/${crmId}/user`, body);
    expect(res.status).toBe(201);
    return res.body.user;
  };
  const providerBody = (overrides: Record<string, unknown> = {}) => ({
    reference: `${unique('prov')}@crm`,
    ownerReference: owner.reference,
    accountReference: accountRef,
    name: 'Praxis Sonnenschein',
    ...overrides,
  });
  const path = (reference: string) => `/crms/${crmId}/provider/${encodeURIComponent(reference)}`;

  beforeAll(async () => {
    app = await startTestApp();
    ({ crmId, api } = await app.newCrm());
    owner = await createUser({ firstName: 'Olga', mobile: '+49 170 7777777' });
    accountRef = `${unique('acc')}@crm`;
    const account = await api.post(`/crms/${crmId}/account`, { ownerReference: owner.reference, accountReference: accountRef, branch: 'handyman' });
    expect(account.status).toBe(201);
  });
  afterAll(async () => app?.close());

  describe('REST', () => {
    it('creates a provider: 201 with a uuid, absent optional values null', async () => {
      const body = providerBody();
      const res = await api.post(`/crms/${crmId}/provider`, body);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        'api-info': API_INFO,
        provider: {
          uuid: expect.stringMatching(UUID),
          reference: body.reference,
          name: 'Praxis Sonnenschein',
          email: null,
          mobile: null,
          phone: null,
          impressum: null,
          branch: null,
          subbranch: null,
        },
      });
      expect(Object.keys(res.body.provider)).toEqual(['uuid', 'reference', 'name', 'email', 'mobile', 'phone', 'impressum', 'branch', 'subbranch']);
      // The time zone defaults to Europe/Berlin.
      const stored = await app.orm.em.fork().findOneOrFail(Provider, { id: res.body.provider.uuid });
      expect(stored.timeZone).toBe('Europe/Berlin');
    });

    it('stores every field; GET answers the same shape', async () => {
      const body = providerBody({
        email: 'Praxis@Example.com',
        mobile: '+49 170 1234567',
        phone: '+49 30 1234567',
        impressum: 'Praxis Sonnenschein, Musterstr. 1, 10115 Berlin',
        branch: 'facilities',
        subbranch: 'cleaning',
        timeZone: 'Europe/Zurich',
      });
      const res = await api.post(`/crms/${crmId}/provider`, body);
      expect(res.status).toBe(201);
      const expected = {
        uuid: expect.stringMatching(UUID),
        reference: body.reference,
        name: 'Praxis Sonnenschein',
        email: 'praxis@example.com',
        mobile: '+49 170 1234567',
        phone: '+49 30 1234567',
        impressum: 'Praxis Sonnenschein, Musterstr. 1, 10115 Berlin',
        branch: 'facilities',
        subbranch: 'cleaning',
      };
      expect(res.body).toEqual({ 'api-info': API_INFO, provider: expected });
      const read = await api.get(path(body.reference));
      expect(read.status).toBe(200);
      expect(read.body).toEqual({ 'api-info': API_INFO, provider: { ...expected, uuid: res.body.provider.uuid } });
    });

    it('a known reference answers 200 with the existing provider unchanged', async () => {
      const body = providerBody();
      const first = await api.post(`/crms/${crmId}/provider`, body);
      const again = await api.post(`/crms/${crmId}/provider`, { ...body, name: 'Renamed', email: 'new@example.com' });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
    });

    it('GET answers 404 for an unknown provider', async () => {
      const res = await api.get(path('unknown@crm'));
      expect(res.status).toBe(404);
      expect(res.body).toEqual(errorBody(expect.any(String)));
    });

    it('404 for an unknown owner or account, 404 for an unknown branch', async () => {
      const noOwner = await api.post(`/crms/${crmId}/provider`, providerBody({ ownerReference: 'ghost@crm' }));
      expect(noOwner.status).toBe(404);
      expect(noOwner.body).toEqual(errorBody('no user found for ownerReference'));
      const noAccount = await api.post(`/crms/${crmId}/provider`, providerBody({ accountReference: 'ghost@crm' }));
      expect(noAccount.status).toBe(404);
      expect(noAccount.body).toEqual(errorBody('no account found for accountReference'));
      const branch = await api.post(`/crms/${crmId}/provider`, providerBody({ branch: 'space' }));
      expect(branch.status).toBe(404);
      expect(branch.body).toEqual(errorBody('Unable to find specified branch. Was space'));
    });

    describe.each(['reference', 'ownerReference', 'accountReference', 'name'])('required field %s', (field) => {
      it.each([
        ['missing', undefined],
        ['null', null],
        ['empty', ''],
      ])('400 naming the field when %s', async (_case, value) => {
        const body: Record<string, unknown> = providerBody();
        if (value === undefined) delete body[field];
        else body[field] = value;
        const res = await api.post(`/crms/${crmId}/provider`, body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(errorBody(expect.stringContaining(field)));
      });
    });

    it('400 for an unknown time zone and an invalid e-mail', async () => {
      const zone = await api.post(`/crms/${crmId}/provider`, providerBody({ timeZone: 'Mars/Olympus' }));
      expect(zone.status).toBe(400);
      expect(zone.body.errors![0].message).toContain('timeZone');
      const email = await api.post(`/crms/${crmId}/provider`, providerBody({ email: 'x' }));
      expect(email.status).toBe(400);
      expect(email.body.errors![0].message).toContain('email');
    });

    it('the owner is staff: GET staff is a plain array of users', async () => {
      const body = providerBody();
      await api.post(`/crms/${crmId}/provider`, body);
      const res = await api.get(`${path(body.reference)}/staff`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([owner]);
      expect(Object.keys(res.body[0])).toEqual(['reference', 'email', 'username', 'firstName', 'lastName', 'phone', 'mobile']);
    });

    it('staff of an unknown provider is 404', async () => {
      const res = await api.get(`${path('unknown@crm')}/staff`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(errorBody(expect.any(String)));
    });

    it('extension: POST staff adds a user (201, then 200), DELETE removes it (204)', async () => {
      const body = providerBody();
      await api.post(`/crms/${crmId}/provider`, body);
      const member = await createUser({ firstName: 'Sam' });

      const added = await api.post(`${path(body.reference)}/staff`, { userReference: member.reference });
      expect(added.status).toBe(201);
      expect(added.body).toEqual({ 'api-info': API_INFO, user: member });
      const repeated = await api.post(`${path(body.reference)}/staff`, { userReference: member.reference });
      expect(repeated.status).toBe(200);
      expect(repeated.body).toEqual({ 'api-info': API_INFO, user: member });

      const listed = await api.get(`${path(body.reference)}/staff`);
      expect(listed.body).toEqual([owner, member]);

      const removed = await api.delete(`${path(body.reference)}/staff/${encodeURIComponent(member.reference)}`);
      expect(removed.status).toBe(204);
      expect(removed.text).toBe('');
      expect((await api.get(`${path(body.reference)}/staff`)).body).toEqual([owner]);

      const again = await api.delete(`${path(body.reference)}/staff/${encodeURIComponent(member.reference)}`);
      expect(again.status).toBe(404);
      expect(again.body).toEqual(errorBody(expect.any(String)));
    });

    it('the owner cannot be removed from the staff (409)', async () => {
      const body = providerBody();
      await api.post(`/crms/${crmId}/provider`, body);
      const res = await api.delete(`${path(body.reference)}/staff/${encodeURIComponent(owner.reference)}`);
      expect(res.status).toBe(409);
      expect(res.body).toEqual(errorBody('The owner of a provider cannot be removed from its staff'));
      expect((await api.get(`${path(body.reference)}/staff`)).body).toEqual([owner]);
    });

    it('adding staff: 400 without userReference, 404 for an unknown user or provider', async () => {
      const body = providerBody();
      await api.post(`/crms/${crmId}/provider`, body);
      const missing = await api.post(`${path(body.reference)}/staff`, {});
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual(errorBody(expect.stringContaining('userReference')));
      const unknownUser = await api.post(`${path(body.reference)}/staff`, { userReference: 'ghost@crm' });
      expect(unknownUser.status).toBe(404);
      expect(unknownUser.body).toEqual(errorBody('no user found for userReference'));
      const unknownProvider = await api.post(`${path('ghost@crm')}/staff`, { userReference: owner.reference });
      expect(unknownProvider.status).toBe(404);
    });

    it('references with special characters work in provider and staff paths', async () => {
      const body = providerBody({ reference: `${unique('p')}/a?b&c#d e%@crm` });
      expect((await api.post(`/crms/${crmId}/provider`, body)).status).toBe(201);
      expect((await api.get(path(body.reference))).body.provider.reference).toBe(body.reference);
      const member = await createUser({ reference: `${unique('m')}/x?y#z@crm` });
      expect((await api.post(`${path(body.reference)}/staff`, { userReference: member.reference })).status).toBe(201);
      expect((await api.delete(`${path(body.reference)}/staff/${encodeURIComponent(member.reference)}`)).status).toBe(204);
    });
  });

  describe('GraphQL', () => {
    it('createProvider creates (created true), repeats (created false) and provider reads it', async () => {
      const input = providerBody({ subbranch: 'plumbing', branch: 'HANDYMAN', language: 'EN' });
      const first = await api.graphql(CREATE_PROVIDER, { input });
      expect(first.body.errors).toBeUndefined();
      expect(first.body.data.createProvider).toEqual({
        created: true,
        provider: {
          uuid: expect.stringMatching(UUID),
          reference: input.reference,
          name: 'Praxis Sonnenschein',
          email: null,
          mobile: null,
          phone: null,
          impressum: null,
          branch: 'HANDYMAN',
          subbranch: 'plumbing',
        },
      });
      const again = await api.graphql(CREATE_PROVIDER, { input: { ...input, name: 'Other' } });
      expect(again.body.data.createProvider).toEqual({ ...first.body.data.createProvider, created: false });
      const read = await api.graphql(PROVIDER_QUERY, { reference: input.reference });
      expect(read.body.data.provider).toEqual(first.body.data.createProvider.provider);
      // The enums are stored as the REST strings.
      expect((await api.get(path(input.reference))).body.provider).toMatchObject({ branch: 'handyman', subbranch: 'plumbing' });
      const stored = await app.orm.em.fork().findOneOrFail(Provider, { reference: input.reference, crm: crmId });
      expect(stored.language).toBe('en');
    });

    it('createProvider refuses a branch or language outside the enums with 400 and creates nothing', async () => {
      for (const overrides of [{ branch: 'handyman' }, { branch: 'space' }, { language: 'fr' }, { language: 'de' }]) {
        const input = providerBody(overrides);
        const res = await api.graphql(CREATE_PROVIDER, { input });
        expect(res.status).toBe(400);
        expect(res.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
        expect(res.body.errors![0].message).toMatch(/Branch|Language/);
        expect((await api.graphql(PROVIDER_QUERY, { reference: input.reference })).body).toEqual({ data: { provider: null } });
      }
    });

    it('provider answers null when unknown (another CRM\'s provider too); createProvider errors carry their codes', async () => {
      const unknown = await api.graphql(PROVIDER_QUERY, { reference: 'ghost@crm' });
      expect(unknown.status).toBe(200);
      expect(unknown.body).toEqual({ data: { provider: null } });
      const mine = providerBody();
      expect((await api.graphql(CREATE_PROVIDER, { input: mine })).body.errors).toBeUndefined();
      const other = (await app.newCrm()).api;
      expect((await other.graphql(PROVIDER_QUERY, { reference: mine.reference })).body).toEqual({ data: { provider: null } });
      expect((await app.anonymous.graphql(PROVIDER_QUERY, { reference: mine.reference })).body.errors![0].extensions.code).toBe('UNAUTHENTICATED');
      const owner404 = await api.graphql(CREATE_PROVIDER, { input: providerBody({ ownerReference: 'ghost@crm' }) });
      expect(owner404.body.errors![0]).toMatchObject({ message: 'no user found for ownerReference', extensions: { code: 'USER_NOT_FOUND' } });
      const empty = await api.graphql(CREATE_PROVIDER, { input: providerBody({ name: ' ' }) });
      expect(empty.body.errors![0].extensions.code).toBe('VALIDATION_FAILED');
      expect(empty.body.errors![0].message).toContain('name');
    });

    it('staff, addStaffMember and removeStaffMember', async () => {
      const input = providerBody();
      await api.graphql(CREATE_PROVIDER, { input });
      const member = await createUser();
      const vars = { providerReference: input.reference, userReference: member.reference };

      expect((await api.graphql(STAFF_QUERY, { providerReference: input.reference })).body.data.staff).toEqual([owner]);
      const added = await api.graphql(ADD_STAFF, vars);
      expect(added.body.data.addStaffMember).toEqual(member);
      expect((await api.graphql(ADD_STAFF, vars)).body.data.addStaffMember).toEqual(member);
      expect((await api.graphql(STAFF_QUERY, { providerReference: input.reference })).body.data.staff).toEqual([owner, member]);

      const removed = await api.graphql(REMOVE_STAFF, vars);
      expect(removed.body.data.removeStaffMember).toBe(true);
      expect((await api.graphql(STAFF_QUERY, { providerReference: input.reference })).body.data.staff).toEqual([owner]);

      const ownerRemoval = await api.graphql(REMOVE_STAFF, { providerReference: input.reference, userReference: owner.reference });
      expect(ownerRemoval.body.errors![0].extensions.code).toBe('CONFLICT');
      const notMember = await api.graphql(REMOVE_STAFF, vars);
      expect(notMember.body.errors![0].extensions.code).toBe('NOT_FOUND');
      const unknownUser = await api.graphql(ADD_STAFF, { providerReference: input.reference, userReference: 'ghost@crm' });
      expect(unknownUser.body.errors![0].extensions.code).toBe('USER_NOT_FOUND');
    });
  });
});
