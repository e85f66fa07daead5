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

    // GET (what a mail scanner follows) only asks: a page with a button that POSTs, and nothing changes.
    const asked = await app.anonymous.get(`/verify-email?token=${user.emailVerificationToken}`);
    expect(asked.status).toBe(200);
    expect(asked.text).toContain(`<form method="post" action="/verify-email?token=${user.emailVerificationToken}">`);
    expect(asked.text).not.toContain('bestätigt.');
    expect((await app.context().em.findOneOrFail(User, { id: user.id })).emailVerified).toBe(false);
    for (const res of [asked]) {
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    }

    // The button's POST (a form with no fields, as the browser sends it) verifies.
    const confirmed = await app.anonymous.request('POST', `/verify-email?token=${user.emailVerificationToken}`, '', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.text).toContain('bestätigt');
    expect(confirmed.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const after = await app.context().em.findOneOrFail(User, { id: user.id });
    expect(after.emailVerified).toBe(true);
    expect(after.emailVerificationToken).toBeNull();

    expect((await app.anonymous.get(`/verify-email?token=${user.emailVerificationToken}`)).status).toBe(400);
    expect((await app.anonymous.request('POST', `/verify-email?token=${user.emailVerificationToken}`, '')).status).toBe(400);
    expect((await app.anonymous.get('/verify-email?token=nonsense')).status).toBe(400);
    expect((await app.anonymous.request('POST', '/verify-email?token=nonsense', '')).status).toBe(400);
    const missing = await app.anonymous.get('/verify-email');
    expect(missing.status).toBe(400);
    expect(missing.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
