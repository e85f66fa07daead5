import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmIntegration } from '../../services/crm/crm-integration.entity.js';
import { User } from '../../services/users/user.entity.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { unique } from '../support/http.js';

describe('e-mail verification link (create user, rule 3)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.close());

  it('confirms the address once, and refuses unknown or used tokens', async () => {
    const { crmId, api } = await app.newCrm();
    const email = `${unique('consumer')}@example.com`;
    const em = app.context().em;
    em.create(User, { crm: em.getReference(CrmIntegration, crmId), email, emailVerified: true, firstName: 'Con', lastName: 'Sumer' });
    await em.flush();

    const linked = await api.post(`/crms/${crmId}/user`, { reference: `${unique()}@crm`, email, username: unique('u'), lastName: 'Sumer' });
    expect(linked.status).toBe(200);
    const user = await app.context().em.findOneOrFail(User, { crm: crmId, email });
    expect(user.emailVerified).toBe(false);
    expect(user.emailVerificationToken).toBeTruthy();

    const confirmed = await app.anonymous.get(`/verify-email?token=${user.emailVerificationToken}`);
    expect(confirmed.status).toBe(200);
    expect(confirmed.text).toContain('bestätigt');
    const after = await app.context().em.findOneOrFail(User, { id: user.id });
    expect(after.emailVerified).toBe(true);
    expect(after.emailVerificationToken).toBeNull();

    expect((await app.anonymous.get(`/verify-email?token=${user.emailVerificationToken}`)).status).toBe(400);
    expect((await app.anonymous.get('/verify-email?token=nonsense')).status).toBe(400);
    expect((await app.anonymous.get('/verify-email')).status).toBe(400);
  });
});
