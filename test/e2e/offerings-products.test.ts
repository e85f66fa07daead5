import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupProvider, type ProviderFixture } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import type { ApiClient } from '../support/http.js';
import { unique } from '../support/http.js';
import { enc } from '../support/offerings-fixtures.js';

describe('offerings: products (REST)', () => {
  let app: TestApp;
  let api: ApiClient;
  let crmId: string;
  let fixture: ProviderFixture;
  let path: string;

  beforeAll(async () => {
    app = await startTestApp();
    ({ crmId, api } = await app.newCrm());
    fixture = await setupProvider(api, crmId);
    path = `/crms/${crmId}/provider/${enc(fixture.providerRef)}/products`;
  });
  afterAll(async () => app?.close());

  it('creates a product with 201 and the wrapped shape; absent optional values are null', async () => {
    const reference = `product-${unique()}@test`;
    const res = await api.post(path, { reference, name: 'Viewing' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      'api-info': { version: '1' },
      product: {
        uuid: expect.any(String),
        reference,
        name: 'Viewing',
        description: null,
        minDuration: null,
        maxDuration: null,
        leadTimeMinutes: null,
        followUpTimeMinutes: null,
      },
    });
  });

  it('accepts durations, lead and follow-up time', async () => {
    const reference = `product-${unique()}@test`;
    const body = { reference, name: 'Consultation', description: 'Shown to customers', minDuration: 30, maxDuration: 90, leadTimeMinutes: 15, followUpTimeMinutes: 0 };
    const res = await api.post(path, body);
    expect(res.status).toBe(201);
    const { reference: _, ...rest } = body;
    expect(res.body.product).toMatchObject({ reference, ...rest });
  });

  it('updates a known reference and answers 200; fields left out keep their value, null clears', async () => {
    const reference = `product-${unique()}@test`;
    const created = await api.post(path, { reference, name: 'Old', description: 'old text', minDuration: 30, leadTimeMinutes: 10 });
    expect(created.status).toBe(201);
    const updated = await api.post(path, { reference, name: 'New', maxDuration: 60, leadTimeMinutes: null });
    expect(updated.status).toBe(200);
    expect(updated.body.product).toEqual({
      uuid: created.body.product.uuid,
      reference,
      name: 'New',
      description: 'old text',
      minDuration: 30,
      maxDuration: 60,
      leadTimeMinutes: null,
      followUpTimeMinutes: null,
    });
  });

  it('lists the products as a plain array with the same fields', async () => {
    const { crmId: otherCrm, api: other } = await app.newCrm();
    const own = await setupProvider(other, otherCrm);
    const listPath = `/crms/${otherCrm}/provider/${enc(own.providerRef)}/products`;
    expect((await other.get(listPath)).body).toEqual([]);
    const a = await other.post(listPath, { reference: `a-${unique()}`, name: 'A', minDuration: 15 });
    const b = await other.post(listPath, { reference: `b-${unique()}`, name: 'B', followUpTimeMinutes: 5 });
    const list = await other.get(listPath);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([a.body.product, b.body.product]);
  });

  it.each([
    [{ name: 'x' }, 'reference is required'],
    [{ reference: 'r' }, 'name is required'],
    [{ reference: 'r', name: '  ' }, 'name must not be empty'],
    [{ reference: 'r', name: 'x', minDuration: 0 }, 'minDuration'],
    [{ reference: 'r', name: 'x', maxDuration: -5 }, 'maxDuration'],
    [{ reference: 'r', name: 'x', minDuration: 12.5 }, 'minDuration must be a whole number'],
    [{ reference: 'r', name: 'x', minDuration: '30' }, 'minDuration must be a number'],
    [{ reference: 'r', name: 'x', leadTimeMinutes: -1 }, 'leadTimeMinutes must be at least 0'],
    [{ reference: 'r', name: 'x', followUpTimeMinutes: 1.5 }, 'followUpTimeMinutes must be a whole number'],
    [{ reference: 'r', name: 'x', minDuration: 60, maxDuration: 30 }, 'minDuration (60) must not be greater than maxDuration (30)'],
  ])('rejects %j with 400', async (body, message) => {
    const res = await api.post(path, body);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].errorCode).toBe('VALIDATION_FAILED');
    expect(res.body.errors[0].message).toContain(message);
  });

  it('checks minDuration <= maxDuration against the stored value on update', async () => {
    const reference = `product-${unique()}@test`;
    expect((await api.post(path, { reference, name: 'x', maxDuration: 30 })).status).toBe(201);
    const res = await api.post(path, { reference, name: 'x', minDuration: 45 });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toContain('must not be greater than maxDuration');
  });

  it('accepts zero lead and follow-up time', async () => {
    const res = await api.post(path, { reference: `product-${unique()}`, name: 'x', leadTimeMinutes: 0, followUpTimeMinutes: 0 });
    expect(res.status).toBe(201);
    expect(res.body.product).toMatchObject({ leadTimeMinutes: 0, followUpTimeMinutes: 0 });
  });

  it('answers 404 for an unknown provider', async () => {
    expect((await api.get(`/crms/${crmId}/provider/nope/products`)).status).toBe(404);
    expect((await api.post(`/crms/${crmId}/provider/nope/products`, { reference: 'r', name: 'x' })).status).toBe(404);
  });

  it('refuses (409) a reference that another provider of the same CRM uses', async () => {
    const second = await setupProvider(api, crmId);
    const reference = `product-${unique()}@test`;
    expect((await api.post(path, { reference, name: 'x' })).status).toBe(201);
    const res = await api.post(`/crms/${crmId}/provider/${enc(second.providerRef)}/products`, { reference, name: 'y' });
    expect(res.status).toBe(409);
    expect(res.body.errors[0].message).toContain('another provider');
  });

  it("gives a second CRM 404 for the first CRM's products", async () => {
    const { crmId: otherCrm, api: other } = await app.newCrm();
    expect((await other.get(`/crms/${otherCrm}/provider/${enc(fixture.providerRef)}/products`)).status).toBe(404);
    const post = await other.post(`/crms/${otherCrm}/provider/${enc(fixture.providerRef)}/products`, { reference: 'r', name: 'x' });
    expect(post.status).toBe(404);
    // And the first CRM's key does not open the second CRM's path.
    expect((await api.get(`/crms/${otherCrm}/provider/${enc(fixture.providerRef)}/products`)).status).toBe(403);
  });
});
