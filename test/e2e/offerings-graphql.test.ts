import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupProvider, type ProviderFixture } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import type { ApiClient } from '../support/http.js';
import { unique } from '../support/http.js';
import { createProduct, createStaffUser } from '../support/offerings-fixtures.js';

const PRODUCT_FIELDS = 'uuid reference name description minDuration maxDuration leadTimeMinutes followUpTimeMinutes';
const RESOURCE_FIELDS =
  'uuid reference provider publicName internalName description contact contactProfileReference archived products website imageUrl messageHelpText address { city zip street number countryCode }';
const PROFILE_FIELDS = 'reference userReference providerReference name contactChannels { label type value }';

describe('offerings: GraphQL', () => {
  let app: TestApp;
  let api: ApiClient;
  let crmId: string;
  let fixture: ProviderFixture;

  beforeAll(async () => {
    app = await startTestApp();
    ({ crmId, api } = await app.newCrm());
    fixture = await setupProvider(api, crmId);
  });
  afterAll(async () => app?.close());

  const codeOf = (res: { body: { errors?: { extensions: { code: string } }[] } }) => res.body.errors?.[0]?.extensions.code;

  describe('products', () => {
    const createProduct = `mutation ($p: String!, $input: ProductInput!) { createProduct(providerReference: $p, input: $input) { created product { ${PRODUCT_FIELDS} } } }`;

    it('createProduct creates, then updates; products lists them', async () => {
      const reference = `product-${unique()}`;
      const input = { reference, name: 'Viewing', minDuration: 30, maxDuration: 60, leadTimeMinutes: 10, followUpTimeMinutes: 5 };
      const created = await api.graphql(createProduct, { p: fixture.providerRef, input });
      expect(created.body.errors).toBeUndefined();
      expect(created.body.data.createProduct).toEqual({ created: true, product: { uuid: expect.any(String), description: null, ...input } });
      const updated = await api.graphql(createProduct, { p: fixture.providerRef, input: { reference, name: 'Renamed' } });
      expect(updated.body.data.createProduct).toMatchObject({ created: false, product: { name: 'Renamed', minDuration: 30, leadTimeMinutes: 10 } });

      const list = await api.graphql(`query ($p: String!) { products(providerReference: $p) { ${PRODUCT_FIELDS} } }`, { p: fixture.providerRef });
      expect(list.body.data.products).toContainEqual(updated.body.data.createProduct.product);
    });

    it('reports the service errors with their codes', async () => {
      const invalid = await api.graphql(createProduct, { p: fixture.providerRef, input: { reference: 'r', name: 'x', minDuration: 90, maxDuration: 30 } });
      expect(codeOf(invalid)).toBe('VALIDATION_FAILED');
      expect(invalid.body.errors![0].message).toContain('must not be greater than maxDuration');
      const negative = await api.graphql(createProduct, { p: fixture.providerRef, input: { reference: 'r', name: 'x', leadTimeMinutes: -1 } });
      expect(codeOf(negative)).toBe('VALIDATION_FAILED');
      const unknown = await api.graphql(`query { products(providerReference: "nope") { uuid } }`);
      expect(codeOf(unknown)).toBe('NOT_FOUND');
    });
  });

  describe('resources', () => {
    const save = `mutation ($p: String!, $input: ResourceInput!, $raise: Boolean!) {
      saveResource(providerReference: $p, input: $input, onDuplicateRaise: $raise) { created resource { ${RESOURCE_FIELDS} } }
    }`;
    const update = `mutation ($p: String!, $r: String!, $input: ResourceUpdateInput!) {
      updateResource(providerReference: $p, reference: $r, input: $input) { ${RESOURCE_FIELDS} }
    }`;

    it('saveResource creates and updates; resource and resources read it back with the extra fields', async () => {
      const product = await createProduct(api, crmId, fixture.providerRef);
      const reference = `resource-${unique()}`;
      const input = {
        reference,
        publicName: 'Court 1',
        internalName: 'court-1',
        products: [product],
        contact: fixture.ownerRef,
        website: 'https://example.com/court',
        imageUrl: 'https://example.com/court.png',
        messageHelpText: 'Tell us your racket size',
        address: { city: 'Hamburg', zip: '20095', street: 'Mönckebergstraße', number: '7' },
      };
      const created = await api.graphql(save, { p: fixture.providerRef, input, raise: false });
      expect(created.body.errors).toBeUndefined();
      expect(created.body.data.saveResource).toEqual({
        created: true,
        resource: {
          uuid: expect.any(String),
          reference,
          provider: fixture.providerRef,
          publicName: 'Court 1',
          internalName: 'court-1',
          description: null,
          contact: fixture.ownerRef,
          contactProfileReference: null,
          archived: false,
          products: [product],
          website: 'https://example.com/court',
          imageUrl: 'https://example.com/court.png',
          messageHelpText: 'Tell us your racket size',
          address: { city: 'Hamburg', zip: '20095', street: 'Mönckebergstraße', number: '7', countryCode: 'DE' },
        },
      });
      const again = await api.graphql(save, { p: fixture.providerRef, input: { reference, publicName: 'Court A', internalName: 'a' }, raise: false });
      expect(again.body.data.saveResource).toMatchObject({ created: false, resource: { publicName: 'Court A', imageUrl: 'https://example.com/court.png' } });
      const raised = await api.graphql(save, { p: fixture.providerRef, input: { reference, publicName: 'x', internalName: 'x' }, raise: true });
      expect(codeOf(raised)).toBe('DUPLICATE_REFERENCE');

      const one = await api.graphql(`query ($p: String!, $r: String!) { resource(providerReference: $p, reference: $r) { ${RESOURCE_FIELDS} } }`, {
        p: fixture.providerRef,
        r: reference,
      });
      expect(one.body.data.resource).toEqual(again.body.data.saveResource.resource);
      const all = await api.graphql(`query ($p: String!) { resources(providerReference: $p) { reference } }`, { p: fixture.providerRef });
      expect(all.body.data.resources).toContainEqual({ reference });
    });

    it('updateResource changes only the given fields and reports errors', async () => {
      const staff = await createStaffUser(api, crmId, fixture.providerRef);
      const reference = `resource-${unique()}`;
      await api.graphql(save, { p: fixture.providerRef, input: { reference, publicName: 'P', internalName: 'I', description: 'd' }, raise: false });
      const res = await api.graphql(update, { p: fixture.providerRef, r: reference, input: { archived: true, contact: staff, messageHelpText: 'Hi' } });
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.updateResource).toMatchObject({ publicName: 'P', description: 'd', archived: true, contact: staff, messageHelpText: 'Hi' });

      const badContact = await api.graphql(update, { p: fixture.providerRef, r: reference, input: { contact: 'ghost@test' } });
      expect(codeOf(badContact)).toBe('VALIDATION_FAILED');
      const badProduct = await api.graphql(update, { p: fixture.providerRef, r: reference, input: { products: ['ghost-product'] } });
      expect(badProduct.body.errors![0].message).toContain('ghost-product');
      const unknown = await api.graphql(update, { p: fixture.providerRef, r: 'ghost', input: { publicName: 'x' } });
      expect(codeOf(unknown)).toBe('NOT_FOUND');
      const missing = await api.graphql(`query { resource(providerReference: "${fixture.providerRef}", reference: "ghost") { uuid } }`);
      expect(missing.status).toBe(200);
      expect(missing.body).toEqual({ data: { resource: null } });
      const noProvider = await api.graphql(`query { resource(providerReference: "ghost@crm", reference: "${reference}") { uuid } }`);
      expect(noProvider.body).toEqual({ data: { resource: null } });
    });

    it('deleteResource deletes a resource without appointments', async () => {
      const reference = `resource-${unique()}`;
      await api.graphql(save, { p: fixture.providerRef, input: { reference, publicName: 'P', internalName: 'I' }, raise: false });
      const res = await api.graphql(`mutation ($p: String!, $r: String!) { deleteResource(providerReference: $p, reference: $r) }`, {
        p: fixture.providerRef,
        r: reference,
      });
      expect(res.body).toEqual({ data: { deleteResource: true } });
      const gone = await api.graphql(`query ($p: String!, $r: String!) { resource(providerReference: $p, reference: $r) { uuid } }`, { p: fixture.providerRef, r: reference });
      expect(gone.body).toEqual({ data: { resource: null } });
    });
  });

  describe('contact profiles', () => {
    const saveGeneral = `mutation ($u: String!, $input: GeneralContactProfileInput!) { saveGeneralContactProfile(userReference: $u, input: $input) { ${PROFILE_FIELDS} } }`;
    const saveProfile = `mutation ($p: String!, $input: ContactProfileInput!) { saveContactProfile(providerReference: $p, input: $input) { created contactProfile { ${PROFILE_FIELDS} } } }`;

    it('saveGeneralContactProfile and generalContactProfile', async () => {
      const missing = await api.graphql(`query ($u: String!) { generalContactProfile(userReference: $u) { name } }`, { u: fixture.ownerRef });
      expect(missing.body).toEqual({ data: { generalContactProfile: null } });
      const noUser = await api.graphql(`query ($u: String!) { generalContactProfile(userReference: $u) { name } }`, { u: 'ghost@crm' });
      expect(noUser.body).toEqual({ data: { generalContactProfile: null } });
      const input = { name: 'Olga', contactChannels: [{ type: 'MOBILE', value: '+49 170 1234567', label: 'Work' }] };
      const saved = await api.graphql(saveGeneral, { u: fixture.ownerRef, input });
      expect(saved.body.errors).toBeUndefined();
      const expected = {
        reference: null,
        userReference: fixture.ownerRef,
        providerReference: null,
        name: 'Olga',
        contactChannels: [{ label: 'Work', type: 'MOBILE', value: '+49 170 1234567' }],
      };
      expect(saved.body.data.saveGeneralContactProfile).toEqual(expected);
      const read = await api.graphql(`query ($u: String!) { generalContactProfile(userReference: $u) { ${PROFILE_FIELDS} } }`, { u: fixture.ownerRef });
      expect(read.body.data.generalContactProfile).toEqual(expected);

      const duplicate = await api.graphql(saveGeneral, {
        u: fixture.ownerRef,
        input: { name: 'x', contactChannels: [{ type: 'LINK', value: 'a' }, { type: 'LINK', value: 'b' }] },
      });
      expect(codeOf(duplicate)).toBe('VALIDATION_FAILED');
      // A type outside the enum (or in the REST spelling) is refused by GraphQL with 400; the profile stays as it was.
      for (const type of ['FAX', 'mobile']) {
        const badType = await api.graphql(saveGeneral, { u: fixture.ownerRef, input: { name: 'x', contactChannels: [{ type, value: '1' }] } });
        expect(badType.status).toBe(400);
        expect(codeOf(badType)).toBe('BAD_USER_INPUT');
        expect(badType.body.errors![0].message).toContain('ContactChannelType');
      }
      expect((await api.graphql(`query ($u: String!) { generalContactProfile(userReference: $u) { ${PROFILE_FIELDS} } }`, { u: fixture.ownerRef })).body.data.generalContactProfile).toEqual(expected);
      // Every type round-trips: stored in the REST spelling, read back by its GraphQL name.
      const all = ['MOBILE', 'PHONE', 'EMAIL', 'VIDEO', 'MESSENGER', 'LINK', 'LOCATION'].map((type) => ({ type, value: type === 'PHONE' ? '+49 30 1234567' : type === 'EMAIL' ? 'o@example.com' : type === 'MOBILE' ? '+49 170 1234567' : `v-${type}` }));
      const every = await api.graphql(saveGeneral, { u: fixture.ownerRef, input: { name: 'Olga', contactChannels: all } });
      expect(every.body.errors).toBeUndefined();
      expect(every.body.data.saveGeneralContactProfile.contactChannels.map((channel: { type: string }) => channel.type).sort()).toEqual(all.map((c) => c.type).sort());
      const rest = await api.get(`/crms/${crmId}/user/${encodeURIComponent(fixture.ownerRef)}/generalContactProfile`);
      expect(rest.status).toBe(200);
      expect(JSON.stringify(rest.body)).toContain('"type":"messenger"');
    });

    it('saveContactProfile and contactProfile', async () => {
      const input = {
        reference: `profile-${unique()}`,
        userReference: fixture.ownerRef,
        providerReference: fixture.providerRef,
        name: 'Office',
        contactChannels: [{ type: 'EMAIL', value: 'office@example.com' }],
      };
      const created = await api.graphql(saveProfile, { p: fixture.providerRef, input });
      expect(created.body.errors).toBeUndefined();
      expect(created.body.data.saveContactProfile).toEqual({
        created: true,
        contactProfile: { ...input, contactChannels: [{ label: null, type: 'EMAIL', value: 'office@example.com' }] },
      });
      const updated = await api.graphql(saveProfile, { p: fixture.providerRef, input: { ...input, name: 'Front desk' } });
      expect(updated.body.data.saveContactProfile).toMatchObject({ created: false, contactProfile: { name: 'Front desk' } });
      const read = await api.graphql(`query ($p: String!, $r: String!) { contactProfile(providerReference: $p, reference: $r) { ${PROFILE_FIELDS} } }`, {
        p: fixture.providerRef,
        r: input.reference,
      });
      expect(read.body.data.contactProfile).toEqual(updated.body.data.saveContactProfile.contactProfile);

      const mismatch = await api.graphql(saveProfile, { p: fixture.providerRef, input: { ...input, providerReference: 'elsewhere' } });
      expect(codeOf(mismatch)).toBe('VALIDATION_FAILED');
      const noUser = await api.graphql(saveProfile, { p: fixture.providerRef, input: { ...input, userReference: 'ghost@test' } });
      expect(codeOf(noUser)).toBe('USER_NOT_FOUND');
      const unknown = await api.graphql(`query ($p: String!) { contactProfile(providerReference: $p, reference: "ghost") { name } }`, { p: fixture.providerRef });
      expect(unknown.body).toEqual({ data: { contactProfile: null } });
      const noProvider = await api.graphql(`query ($r: String!) { contactProfile(providerReference: "ghost@crm", reference: $r) { name } }`, { r: input.reference });
      expect(noProvider.body).toEqual({ data: { contactProfile: null } });
    });
  });

  it('needs the CRM key, and another CRM sees nothing of this one', async () => {
    const anonymous = await app.anonymous.graphql(`query ($p: String!) { products(providerReference: $p) { uuid } }`, { p: fixture.providerRef });
    expect(codeOf(anonymous)).toBe('UNAUTHENTICATED');
    const { api: other } = await app.newCrm();
    const lists = [
      `query { products(providerReference: "${fixture.providerRef}") { uuid } }`,
      `query { resources(providerReference: "${fixture.providerRef}") { uuid } }`,
    ];
    for (const query of lists) expect(codeOf(await other.graphql(query))).toBe('NOT_FOUND');
    // Single lookups answer null: for the other CRM this CRM's provider and users do not exist.
    expect((await other.graphql(`query { generalContactProfile(userReference: "${fixture.ownerRef}") { name } }`)).body).toEqual({ data: { generalContactProfile: null } });
    expect((await other.graphql(`query { contactProfile(providerReference: "${fixture.providerRef}", reference: "any") { name } }`)).body).toEqual({ data: { contactProfile: null } });
    expect((await other.graphql(`query { resource(providerReference: "${fixture.providerRef}", reference: "any") { uuid } }`)).body).toEqual({ data: { resource: null } });
  });
});
