import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.js';
import { setupProvider } from '../support/fixtures.js';

describe('gateway smoke', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.close());

  it('answers health and runs the setup flow', async () => {
    expect((await app.anonymous.get('/healthz')).status).toBe(200);
    const { crmId, api } = await app.newCrm();
    const fixture = await setupProvider(api, crmId);
    const staff = await api.get(`/crms/${crmId}/provider/${encodeURIComponent(fixture.providerRef)}/staff`);
    expect(staff.status).toBe(200);
    expect(staff.body).toHaveLength(1);
  });
});
