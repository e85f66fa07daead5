import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.js';
import { type ApiClient, unique } from '../support/http.js';

const API_INFO = { version: '1' };
const errorBody = (message: unknown) => ({ 'api-info': API_INFO, errors: [{ errorCode: expect.any(String), message }] });

const ACCOUNT_FIELDS =
  'ownerReference branch accountReference invoiceAddress { city countryCode street number zip } invoiceContactName invoiceCompanyName invoiceTaxId email';
const CREATE_ACCOUNT = `mutation ($input: CreateAccountInput!) { createAccount(input: $input) { created account { ${ACCOUNT_FIELDS} } } }`;
const ACCOUNT_QUERY = `query ($reference: String!) { account(reference: $reference) { ${ACCOUNT_FIELDS} } }`;

const ADDRESS = { city: 'Berlin', countryCode: 'de', street: 'Unter den Linden', number: '1a', zip: '10117' };

describe('Setup: create and get account', () => {
  let app: TestApp;
  let api: ApiClient;
  let crmId: string;
  let base: string;
  let ownerRef: string;

  beforeAll(async () => {
    app = await startTestApp();
    ({ crmId, api } = await app.newCrm());
    base = `/crms/${crmId}/account`;
    const id = unique('owner');
    ownerRef = `${id}@crm`;
    const owner = await api.post(`/crms/${crmId}/user`, { reference: ownerRef, email: `${id}@example.com`, username: id, lastName: 'Owner' });
    expect(owner.status).toBe(201);
  });
  afterAll(async () => app?.close());

  const accountBody = (overrides: Record<string, unknown> = {}) => ({
    ownerReference: ownerRef,
    accountReference: `${unique('acc')}@crm`,
    branch: 'real-estate',
    ...overrides,
  });

  describe('REST', () => {
    it('rule 1: an unknown accountReference creates the account (201), absent optional values null', async () => {
      const body = accountBody();
      const res = await api.post(base, body);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        'api-info': API_INFO,
        account: {
          ownerReference: ownerRef,
          branch: 'real-estate',
          accountReference: body.accountReference,
          invoiceAddress: null,
          invoiceContactName: null,
          invoiceCompanyName: null,
          invoiceTaxId: null,
          email: null,
        },
      });
      expect(Object.keys(res.body.account)).toEqual([
        'ownerReference',
        'branch',
        'accountReference',
        'invoiceAddress',
        'invoiceContactName',
        'invoiceCompanyName',
        'invoiceTaxId',
        'email',
      ]);
    });

    it('stores every field; GET answers the same account', async () => {
      const body = accountBody({
        branch: 'sports-and-leisure',
        invoiceAddress: ADDRESS,
        invoiceContactName: 'Max Muster',
        invoiceCompanyName: 'Muster GmbH',
        invoiceTaxId: 'DE123456789',
        email: 'Invoices@Muster.example',
      });
      const res = await api.post(base, body);
      expect(res.status).toBe(201);
      const expected = {
        ownerReference: ownerRef,
        branch: 'sports-and-leisure',
        accountReference: body.accountReference,
        invoiceAddress: { ...ADDRESS, countryCode: 'DE' },
        invoiceContactName: 'Max Muster',
        invoiceCompanyName: 'Muster GmbH',
        invoiceTaxId: 'DE123456789',
        email: 'invoices@muster.example',
      };
      expect(res.body).toEqual({ 'api-info': API_INFO, account: expected });
      const read = await api.get(`${base}/${encodeURIComponent(body.accountReference)}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual({ 'api-info': API_INFO, account: expected });
    });

    it.each(['real-estate', 'facilities', 'handyman', 'sports-and-leisure', 'misc'])('accepts the branch %s', async (branch) => {
      expect((await api.post(base, accountBody({ branch }))).status).toBe(201);
    });

    it('rule 2: a known accountReference answers 200 with the existing account; existing fields are not overwritten', async () => {
      const body = accountBody({ invoiceContactName: 'First', email: 'first@example.com' });
      await api.post(base, body);
      const res = await api.post(base, {
        ...body,
        branch: 'misc',
        invoiceContactName: 'Second',
        invoiceCompanyName: 'Added later',
        invoiceAddress: ADDRESS,
        email: 'second@example.com',
      });
      expect(res.status).toBe(200);
      expect(res.body.account).toEqual({
        ownerReference: ownerRef,
        branch: 'real-estate',
        accountReference: body.accountReference,
        invoiceAddress: null,
        invoiceContactName: 'First',
        invoiceCompanyName: null,
        invoiceTaxId: null,
        email: 'first@example.com',
      });
      expect((await api.get(`${base}/${encodeURIComponent(body.accountReference)}`)).body.account).toEqual(res.body.account);
    });

    it('404 "no user found for ownerReference" for an unknown owner', async () => {
      const res = await api.post(base, accountBody({ ownerReference: 'nobody@crm' }));
      expect(res.status).toBe(404);
      expect(res.body).toEqual(errorBody('no user found for ownerReference'));
    });

    it('404 "Unable to find specified branch. Was <branch>" for an unknown branch', async () => {
      const res = await api.post(base, accountBody({ branch: 'gardening' }));
      expect(res.status).toBe(404);
      expect(res.body).toEqual(errorBody('Unable to find specified branch. Was gardening'));
      const wrongCase = await api.post(base, accountBody({ branch: 'Real-Estate' }));
      expect(wrongCase.status).toBe(404);
      expect(wrongCase.body.errors![0].message).toBe('Unable to find specified branch. Was Real-Estate');
    });

    it.each(['no-at-sign', 'two@at@signs', '@platform', 'id@', 'with space@crm'])(
      '404 "Unable to parse account reference. Was <reference>" for %s',
      async (reference) => {
        const res = await api.post(base, accountBody({ accountReference: reference }));
        expect(res.status).toBe(404);
        expect(res.body).toEqual(errorBody(`Unable to parse account reference. Was ${reference}`));
      },
    );

    describe.each(['ownerReference', 'accountReference', 'branch'])('required field %s', (field) => {
      it.each([
        ['missing', undefined],
        ['null', null],
        ['empty', ''],
      ])('400 naming the field when %s', async (_case, value) => {
        const body: Record<string, unknown> = accountBody();
        if (value === undefined) delete body[field];
        else body[field] = value;
        const res = await api.post(base, body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(errorBody(expect.stringContaining(field)));
      });
    });

    it.each(['city', 'countryCode', 'street', 'number', 'zip'])('invoiceAddress without %s is a 400 naming it', async (field) => {
      const address: Record<string, unknown> = { ...ADDRESS };
      delete address[field];
      const res = await api.post(base, accountBody({ invoiceAddress: address }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody(expect.stringContaining(`invoiceAddress.${field}`)));
      const empty = await api.post(base, accountBody({ invoiceAddress: { ...ADDRESS, [field]: '' } }));
      expect(empty.status).toBe(400);
      expect(empty.body.errors![0].message).toContain(`invoiceAddress.${field}`);
    });

    it('invoiceAddress: null is accepted as absent; a bad country code or a string is a 400', async () => {
      const none = await api.post(base, accountBody({ invoiceAddress: null }));
      expect(none.status).toBe(201);
      expect(none.body.account.invoiceAddress).toBeNull();
      const country = await api.post(base, accountBody({ invoiceAddress: { ...ADDRESS, countryCode: 'Germany' } }));
      expect(country.status).toBe(400);
      expect(country.body.errors![0].message).toContain('invoiceAddress.countryCode');
      const text = await api.post(base, accountBody({ invoiceAddress: 'Berlin' }));
      expect(text.status).toBe(400);
      expect(text.body.errors![0].message).toContain('invoiceAddress');
    });

    it('400 for an invalid invoice e-mail and for wrong types', async () => {
      const email = await api.post(base, accountBody({ email: 'nope' }));
      expect(email.status).toBe(400);
      expect(email.body.errors![0].message).toContain('email');
      const branch = await api.post(base, accountBody({ branch: 7 }));
      expect(branch.status).toBe(400);
      expect(branch.body).toEqual(errorBody('branch must be a string, got number'));
    });

    it('GET answers 404 for an unknown reference', async () => {
      const res = await api.get(`${base}/${encodeURIComponent('unknown@crm')}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(errorBody(expect.any(String)));
    });

    it('GET finds a reference with special characters when URL-encoded', async () => {
      const body = accountBody({ accountReference: `${unique('a')}/x?y&z#w%20@crm.example` });
      expect((await api.post(base, body)).status).toBe(201);
      const res = await api.get(`${base}/${encodeURIComponent(body.accountReference)}`);
      expect(res.status).toBe(200);
      expect(res.body.account.accountReference).toBe(body.accountReference);
    });
  });

  describe('GraphQL', () => {
    /** GraphQL names the branch by its enum value (REAL_ESTATE for REST's real-estate). */
    const graphqlBody = (overrides: Record<string, unknown> = {}) => accountBody({ branch: 'REAL_ESTATE', ...overrides });

    it('createAccount creates (created true) and returns the existing one unchanged (created false)', async () => {
      const input = graphqlBody({ invoiceAddress: ADDRESS, invoiceTaxId: 'T-1' });
      const first = await api.graphql(CREATE_ACCOUNT, { input });
      expect(first.body.errors).toBeUndefined();
      expect(first.body.data.createAccount).toEqual({
        created: true,
        account: {
          ownerReference: ownerRef,
          branch: 'REAL_ESTATE',
          accountReference: input.accountReference,
          invoiceAddress: { ...ADDRESS, countryCode: 'DE' },
          invoiceContactName: null,
          invoiceCompanyName: null,
          invoiceTaxId: 'T-1',
          email: null,
        },
      });
      const second = await api.graphql(CREATE_ACCOUNT, { input: { ...input, invoiceTaxId: 'T-2', branch: 'MISC' } });
      expect(second.body.data.createAccount).toEqual({ ...first.body.data.createAccount, created: false });
      const read = await api.graphql(ACCOUNT_QUERY, { reference: input.accountReference });
      expect(read.body.data.account).toEqual(first.body.data.createAccount.account);
    });

    it.each([
      ['REAL_ESTATE', 'real-estate'],
      ['FACILITIES', 'facilities'],
      ['HANDYMAN', 'handyman'],
      ['SPORTS_AND_LEISURE', 'sports-and-leisure'],
      ['MISC', 'misc'],
    ])('branch %s is stored as %s (REST shows that) and read back by its GraphQL name', async (name, rest) => {
      const input = graphqlBody({ branch: name });
      expect((await api.graphql(CREATE_ACCOUNT, { input })).body.data.createAccount.account.branch).toBe(name);
      expect((await api.get(`${base}/${encodeURIComponent(input.accountReference as string)}`)).body.account.branch).toBe(rest);
      expect((await api.graphql(ACCOUNT_QUERY, { reference: input.accountReference })).body.data.account.branch).toBe(name);
    });

    it('the documented 404s carry their codes in extensions.code; an unknown branch is refused by GraphQL (400), account is null when unknown', async () => {
      const owner = await api.graphql(CREATE_ACCOUNT, { input: graphqlBody({ ownerReference: 'ghost@crm' }) });
      expect(owner.body.errors![0]).toMatchObject({ message: 'no user found for ownerReference', extensions: { code: 'USER_NOT_FOUND' } });
      for (const branch of ['zoo', 'real-estate']) {
        const input = graphqlBody({ branch });
        const refused = await api.graphql(CREATE_ACCOUNT, { input });
        expect(refused.status).toBe(400);
        expect(refused.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
        expect(refused.body.errors![0].message).toContain('Branch');
        expect((await api.graphql(ACCOUNT_QUERY, { reference: input.accountReference })).body).toEqual({ data: { account: null } });
      }
      const reference = await api.graphql(CREATE_ACCOUNT, { input: graphqlBody({ accountReference: 'plain' }) });
      expect(reference.body.errors![0]).toMatchObject({
        message: 'Unable to parse account reference. Was plain',
        extensions: { code: 'REFERENCE_UNPARSABLE' },
      });
      const missing = await api.graphql(ACCOUNT_QUERY, { reference: 'unknown@crm' });
      expect(missing.status).toBe(200);
      expect(missing.body).toEqual({ data: { account: null } });
    });

    it('VALIDATION_FAILED for an empty required field and an incomplete invoice address', async () => {
      const empty = await api.graphql(CREATE_ACCOUNT, { input: graphqlBody({ ownerReference: '' }) });
      expect(empty.body.errors![0].extensions.code).toBe('VALIDATION_FAILED');
      expect(empty.body.errors![0].message).toContain('ownerReference');
      const { zip: _zip, ...address } = ADDRESS;
      const incomplete = await api.graphql(CREATE_ACCOUNT, { input: graphqlBody({ invoiceAddress: address }) });
      // zip is non-null in AddressInput, so GraphQL rejects it before the service.
      expect(incomplete.status).toBeLessThan(500);
      expect(incomplete.body.errors![0].message).toContain('zip');
      const noCountry = await api.graphql(CREATE_ACCOUNT, { input: graphqlBody({ invoiceAddress: { ...ADDRESS, countryCode: null } }) });
      expect(noCountry.body.errors![0].extensions.code).toBe('VALIDATION_FAILED');
      expect(noCountry.body.errors![0].message).toContain('invoiceAddress.countryCode');
    });
  });
});
