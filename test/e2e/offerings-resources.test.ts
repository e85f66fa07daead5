import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupProvider, type ProviderFixture } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import type { ApiClient } from '../support/http.js';
import { unique } from '../support/http.js';
import { createProduct, createResource, createStaffUser, createUser, enc } from '../support/offerings-fixtures.js';

const channels = [{ type: 'phone', value: '+49 30 123456' }];

describe('offerings: resources (REST)', () => {
  let app: TestApp;
  let api: ApiClient;
  let crmId: string;
  let fixture: ProviderFixture;
  let base: string;
  let productA: string;
  let productB: string;
  let staffRef: string;

  beforeAll(async () => {
    app = await startTestApp();
    ({ crmId, api } = await app.newCrm());
    fixture = await setupProvider(api, crmId);
    base = `/crms/${crmId}/provider/${enc(fixture.providerRef)}`;
    productA = await createProduct(api, crmId, fixture.providerRef);
    productB = await createProduct(api, crmId, fixture.providerRef);
    staffRef = await createStaffUser(api, crmId, fixture.providerRef);
  });
  afterAll(async () => app?.close());

  const profileFor = async (userReference: string, providerRef = fixture.providerRef) => {
    const reference = `profile-${unique()}@test`;
    const res = await api.post(`/crms/${crmId}/provider/${enc(providerRef)}/contactProfile`, {
      reference,
      userReference,
      providerReference: providerRef,
      name: 'Public Name',
      contactChannels: channels,
    });
    expect(res.status).toBe(201);
    return reference;
  };

  it('creates a resource with 201 and the plain resource object', async () => {
    const reference = `resource-${unique()}@test`;
    const res = await api.post(`${base}/resources`, {
      reference,
      publicName: 'Agent Anna',
      internalName: 'anna',
      description: 'Shows flats',
      products: [productB, productA, productA],
      contact: fixture.ownerRef,
      website: 'https://example.com/anna',
      address: { city: 'Berlin', zip: '10115', street: 'Invalidenstraße', number: '1' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      reference,
      uuid: expect.any(String),
      provider: fixture.providerRef,
      publicName: 'Agent Anna',
      internalName: 'anna',
      description: 'Shows flats',
      contact: fixture.ownerRef,
      archived: false,
      products: [productA, productB].sort(),
      address: { city: 'Berlin', zip: '10115', street: 'Invalidenstraße', number: '1', countryCode: 'DE' },
    });
  });

  it('answers null for absent optional values and upper-cases a given countryCode', async () => {
    const reference = await createResource(api, crmId, fixture.providerRef);
    const list = await api.get(`${base}/resources`);
    expect(list.body.find((r: { reference: string }) => r.reference === reference)).toMatchObject({
      description: null,
      contact: null,
      products: [],
      address: null,
      archived: false,
    });
    const withCountry = await api.post(`${base}/resources`, {
      reference: `resource-${unique()}`,
      publicName: 'p',
      internalName: 'i',
      address: { city: 'Basel', zip: '4051', street: 'Freie Strasse', number: '3', countryCode: 'ch' },
    });
    expect(withCountry.body.address.countryCode).toBe('CH');
  });

  it('updates an existing reference with 200 unless onDuplicateRaise=true (400)', async () => {
    const reference = await createResource(api, crmId, fixture.providerRef, { products: [productA], description: 'keep' });
    const updated = await api.post(`${base}/resources?onDuplicateRaise=false`, { reference, publicName: 'Renamed', internalName: 'renamed' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ reference, publicName: 'Renamed', internalName: 'renamed', description: 'keep', products: [productA] });
    const byDefault = await api.post(`${base}/resources`, { reference, publicName: 'Again', internalName: 'again', products: [] });
    expect(byDefault.status).toBe(200);
    expect(byDefault.body.products).toEqual([]);

    const raised = await api.post(`${base}/resources?onDuplicateRaise=true`, { reference, publicName: 'x', internalName: 'x' });
    expect(raised.status).toBe(400);
    expect(raised.body.errors[0]).toEqual({ errorCode: 'DUPLICATE_REFERENCE', message: `Resource with reference ${reference} already exists` });
    expect((await api.post(`${base}/resources?onDuplicateRaise=maybe`, { reference, publicName: 'x', internalName: 'x' })).status).toBe(400);
    // A new reference with onDuplicateRaise=true is simply created.
    expect((await api.post(`${base}/resources?onDuplicateRaise=true`, { reference: `resource-${unique()}`, publicName: 'x', internalName: 'x' })).status).toBe(201);
  });

  it.each([
    [{ publicName: 'p', internalName: 'i' }, 'reference is required'],
    [{ reference: 'r', internalName: 'i' }, 'publicName is required'],
    [{ reference: 'r', publicName: 'p' }, 'internalName is required'],
    [{ reference: 'r', publicName: 'p', internalName: 'i', products: 'x' }, 'products must be an array'],
    [{ reference: 'r', publicName: 'p', internalName: 'i', address: { city: 'Berlin', zip: '10115', number: '1' } }, 'address.street is required'],
    [{ reference: 'r', publicName: 'p', internalName: 'i', address: { city: 'Berlin', street: 's', number: '1' } }, 'address.zip is required'],
    [{ reference: 'r', publicName: 'p', internalName: 'i', address: { zip: '1', street: 's', number: '1' } }, 'address.city is required'],
    [{ reference: 'r', publicName: 'p', internalName: 'i', address: { city: 'c', zip: '1', street: 's' } }, 'address.number is required'],
    [{ reference: 'r', publicName: 'p', internalName: 'i', address: { city: 'c', zip: '1', street: 's', number: '1', countryCode: 'DEU' } }, 'address.countryCode'],
    [{ reference: 'r', publicName: 'p', internalName: 'i', website: 'ftp://example.com' }, 'website must be a URL starting with http:// or https://'],
    [{ reference: 'r', publicName: 'p', internalName: 'i', website: 'not a url' }, 'website must be a URL'],
    [{ reference: 'r', publicName: 'p', internalName: 'i', imageUrl: 'javascript:alert(1)' }, 'imageUrl must be a URL'],
    [{ reference: 'r', publicName: 'p', internalName: 'i', contactProfileReference: 'some-profile' }, 'contact is required when contactProfileReference is given'],
  ])('rejects %j with 400', async (body, message) => {
    const res = await api.post(`${base}/resources`, body);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toContain(message);
  });

  it('rejects unknown products and products of another provider, naming the reference', async () => {
    const missing = await api.post(`${base}/resources`, { reference: `r-${unique()}`, publicName: 'p', internalName: 'i', products: [productA, 'ghost@test'] });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].message).toBe('products: no product of this provider with reference ghost@test');

    const other = await setupProvider(api, crmId);
    const foreign = await createProduct(api, crmId, other.providerRef);
    const res = await api.post(`${base}/resources`, { reference: `r-${unique()}`, publicName: 'p', internalName: 'i', products: [foreign] });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toContain(foreign);
  });

  it('requires the contact to be a known staff member of the provider', async () => {
    const unknown = await api.post(`${base}/resources`, { reference: `r-${unique()}`, publicName: 'p', internalName: 'i', contact: 'ghost@test' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].message).toBe('contact: no user with reference ghost@test');

    const outsider = await createUser(api, crmId);
    const notStaff = await api.post(`${base}/resources`, { reference: `r-${unique()}`, publicName: 'p', internalName: 'i', contact: outsider });
    expect(notStaff.status).toBe(400);
    expect(notStaff.body.errors[0].message).toContain('is not staff of provider');

    const staff = await api.post(`${base}/resources`, { reference: `r-${unique()}`, publicName: 'p', internalName: 'i', contact: staffRef });
    expect(staff.status).toBe(201);
    expect(staff.body.contact).toBe(staffRef);
  });

  it("accepts the contact's own profile for this provider and refuses other profiles", async () => {
    const own = await profileFor(staffRef);
    const ok = await api.post(`${base}/resources`, { reference: `r-${unique()}`, publicName: 'p', internalName: 'i', contact: staffRef, contactProfileReference: own });
    expect(ok.status).toBe(201);

    const ownersProfile = await profileFor(fixture.ownerRef);
    const foreignUser = await api.post(`${base}/resources`, {
      reference: `r-${unique()}`,
      publicName: 'p',
      internalName: 'i',
      contact: staffRef,
      contactProfileReference: ownersProfile,
    });
    expect(foreignUser.status).toBe(400);
    expect(foreignUser.body.errors[0].message).toContain('does not belong to contact');

    // The same staff member's profile made for another provider does not apply here.
    const other = await setupProvider(api, crmId);
    const otherProfile = await profileFor(staffRef, other.providerRef);
    const wrongProvider = await api.post(`${base}/resources`, {
      reference: `r-${unique()}`,
      publicName: 'p',
      internalName: 'i',
      contact: staffRef,
      contactProfileReference: otherProfile,
    });
    expect(wrongProvider.status).toBe(400);
    expect(wrongProvider.body.errors[0].message).toContain('is not valid for provider');

    const unknownProfile = await api.post(`${base}/resources`, {
      reference: `r-${unique()}`,
      publicName: 'p',
      internalName: 'i',
      contact: staffRef,
      contactProfileReference: 'ghost-profile',
    });
    expect(unknownProfile.status).toBe(400);
    expect(unknownProfile.body.errors[0].message).toContain('ghost-profile');
  });

  it('updates only the supplied fields, answers 202 and sets archived', async () => {
    const reference = await createResource(api, crmId, fixture.providerRef, {
      description: 'before',
      products: [productA],
      contact: staffRef,
      address: { city: 'Berlin', zip: '10115', street: 'Invalidenstraße', number: '1' },
    });
    const res = await api.post(`${base}/resources/${enc(reference)}`, { publicName: 'After', archived: true, products: [productB] });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      reference,
      uuid: expect.any(String),
      provider: fixture.providerRef,
      publicName: 'After',
      internalName: 'agent',
      description: 'before',
      contact: staffRef,
      archived: true,
      products: [productB],
      address: { city: 'Berlin', zip: '10115', street: 'Invalidenstraße', number: '1', countryCode: 'DE' },
    });
    const cleared = await api.post(`${base}/resources/${enc(reference)}`, { description: null, address: null, contact: null, archived: false });
    expect(cleared.status).toBe(202);
    expect(cleared.body).toMatchObject({ description: null, address: null, contact: null, archived: false, publicName: 'After', products: [productB] });
  });

  it('checks contact and profile together on update: a profile needs its contact', async () => {
    const profile = await profileFor(staffRef);
    const reference = await createResource(api, crmId, fixture.providerRef, { contact: staffRef, contactProfileReference: profile });
    const path = `${base}/resources/${enc(reference)}`;
    // Only the profile is given: the stored contact is used.
    expect((await api.post(path, { contactProfileReference: profile })).status).toBe(202);
    const dropContact = await api.post(path, { contact: null });
    expect(dropContact.status).toBe(400);
    expect(dropContact.body.errors[0].message).toBe('contact is required when contactProfileReference is given');
    const otherContact = await api.post(path, { contact: fixture.ownerRef });
    expect(otherContact.status).toBe(400);
    const both = await api.post(path, { contact: null, contactProfileReference: null });
    expect(both.status).toBe(202);
    expect(both.body.contact).toBeNull();
  });

  it.each([
    [{ archived: 'yes' }, 'archived must be a boolean'],
    [{ publicName: '' }, 'publicName must not be empty'],
    [{ products: ['ghost@test'] }, 'ghost@test'],
    [{ website: 'mailto:a@b.c' }, 'website'],
    [{ address: { city: 'Berlin' } }, 'address.zip is required'],
    [{ reference: 'another-reference' }, 'reference cannot be changed'],
  ])('rejects the update %j with 400', async (body, message) => {
    const reference = await createResource(api, crmId, fixture.providerRef);
    const res = await api.post(`${base}/resources/${enc(reference)}`, body);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toContain(message);
  });

  it('answers 404 for an update of an unknown resource or provider', async () => {
    expect((await api.post(`${base}/resources/ghost`, { publicName: 'x' })).status).toBe(404);
    expect((await api.post(`/crms/${crmId}/provider/nope/resources/ghost`, { publicName: 'x' })).status).toBe(404);
    expect((await api.get(`/crms/${crmId}/provider/nope/resources`)).status).toBe(404);
  });

  it('lists live resources (archived included) as a plain array and hides deleted ones', async () => {
    const { crmId: ownCrm, api: own } = await app.newCrm();
    const provider = await setupProvider(own, ownCrm);
    const listPath = `/crms/${ownCrm}/provider/${enc(provider.providerRef)}/resources`;
    const first = await createResource(own, ownCrm, provider.providerRef);
    const second = await createResource(own, ownCrm, provider.providerRef);
    const third = await createResource(own, ownCrm, provider.providerRef);
    await own.post(`${listPath}/${enc(second)}`, { archived: true });
    expect((await own.delete(`${listPath}/${enc(third)}`)).status).toBe(204);
    const list = await own.get(listPath);
    expect(list.status).toBe(200);
    expect(list.body.map((r: { reference: string; archived: boolean }) => [r.reference, r.archived])).toEqual([
      [first, false],
      [second, true],
    ]);
    expect(Object.keys(list.body[0]).sort()).toEqual(
      ['address', 'archived', 'contact', 'description', 'internalName', 'products', 'provider', 'publicName', 'reference', 'uuid'].sort(),
    );
  });

  it('lists a resource exactly as its write answers it (products sorted, contact, address), and products as created', async () => {
    const { crmId: ownCrm, api: own } = await app.newCrm();
    const provider = await setupProvider(own, ownCrm);
    const path = `/crms/${ownCrm}/provider/${enc(provider.providerRef)}`;
    const products = [];
    for (const reference of ['zeta@test', 'Alpha@test', 'beta@test']) {
      const created = await own.post(`${path}/products`, { reference, name: `Name ${reference}`, description: 'd', minDuration: 15, maxDuration: 60, leadTimeMinutes: 5, followUpTimeMinutes: 10 });
      expect(created.status).toBe(201);
      products.push(created.body.product);
    }
    const bare = await own.post(`${path}/products`, { reference: 'bare@test', name: 'Bare' });
    products.push(bare.body.product);
    const staff = await createStaffUser(own, ownCrm, provider.providerRef);
    const written = await own.post(`${path}/resources`, {
      reference: `full-${unique()}`,
      publicName: 'Full',
      internalName: 'full',
      description: 'all fields',
      products: ['zeta@test', 'beta@test', 'Alpha@test'],
      contact: staff,
      address: { city: 'Köln', zip: '50667', street: 'Domplatz', number: '1a', countryCode: 'de' },
    });
    expect(written.status).toBe(201);
    const plain = await own.post(`${path}/resources`, { reference: `plain-${unique()}`, publicName: 'Plain', internalName: 'plain' });
    const list = await own.get(`${path}/resources`);
    expect(list.body).toEqual([written.body, plain.body]);
    expect(list.body[0].products).toEqual(['Alpha@test', 'beta@test', 'zeta@test']);
    expect((await own.get(`${path}/products`)).body).toEqual(products);
  });

  it('deletes a resource without future appointments (204); its reference can be used again', async () => {
    const reference = await createResource(api, crmId, fixture.providerRef);
    const path = `${base}/resources/${enc(reference)}`;
    const deleted = await api.delete(path);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await api.delete(path)).status).toBe(404);
    expect((await api.post(path, { publicName: 'x' })).status).toBe(404);
    expect((await api.post(`${base}/resources?onDuplicateRaise=true`, { reference, publicName: 'again', internalName: 'again' })).status).toBe(201);
  });

  it('refuses (409) a reference that another provider of the same CRM uses', async () => {
    const other = await setupProvider(api, crmId);
    const reference = await createResource(api, crmId, other.providerRef);
    const res = await api.post(`${base}/resources`, { reference, publicName: 'p', internalName: 'i' });
    expect(res.status).toBe(409);
    expect(res.body.errors[0].message).toContain('another provider');
  });

  it("gives a second CRM 404 for the first CRM's resources and refuses its products and users", async () => {
    const reference = await createResource(api, crmId, fixture.providerRef);
    const { crmId: otherCrm, api: other } = await app.newCrm();
    const foreignBase = `/crms/${otherCrm}/provider/${enc(fixture.providerRef)}`;
    expect((await other.get(`${foreignBase}/resources`)).status).toBe(404);
    expect((await other.post(`${foreignBase}/resources`, { reference: 'r', publicName: 'p', internalName: 'i' })).status).toBe(404);
    expect((await other.post(`${foreignBase}/resources/${enc(reference)}`, { publicName: 'x' })).status).toBe(404);
    expect((await other.delete(`${foreignBase}/resources/${enc(reference)}`)).status).toBe(404);

    const own = await setupProvider(other, otherCrm);
    const ownBase = `/crms/${otherCrm}/provider/${enc(own.providerRef)}`;
    expect((await other.post(`${ownBase}/resources/${enc(reference)}`, { publicName: 'x' })).status).toBe(404);
    const withForeignProduct = await other.post(`${ownBase}/resources`, { reference: `r-${unique()}`, publicName: 'p', internalName: 'i', products: [productA] });
    expect(withForeignProduct.status).toBe(400);
    const withForeignContact = await other.post(`${ownBase}/resources`, { reference: `r-${unique()}`, publicName: 'p', internalName: 'i', contact: staffRef });
    expect(withForeignContact.status).toBe(400);
    expect(withForeignContact.body.errors[0].message).toBe(`contact: no user with reference ${staffRef}`);
    // The same reference is free in another CRM.
    expect((await other.post(`${ownBase}/resources?onDuplicateRaise=true`, { reference, publicName: 'p', internalName: 'i' })).status).toBe(201);
  });
});
