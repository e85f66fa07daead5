import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.js';
import { unique } from '../support/http.js';

describe('request bodies', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.close());

  it('reads a JSON body sent without Content-Type or with a form type, and refuses one that is not JSON with 400', async () => {
    const { crmId, key } = await app.newCrm();
    const id = unique();
    const body = JSON.stringify({ reference: `${id}@crm`, email: `${id}@example.com`, username: id, lastName: 'Plain' });
    const send = (contentType: string | undefined, payload: string) =>
      fetch(`${app.baseUrl}/crms/${crmId}/user`, {
        method: 'POST',
        headers: { 'X-SERVICE-CLIENT-ID': key, ...(contentType ? { 'content-type': contentType } : {}) },
        body: payload,
      });
    expect((await send('application/x-www-form-urlencoded', body)).status).toBe(201);
    expect((await send('text/plain', body)).status).toBe(200);
    const form = await send('application/x-www-form-urlencoded', 'reference=a&email=b');
    expect(form.status).toBe(400);
    expect(await form.json()).toMatchObject({ 'api-info': { version: '1' }, errors: [{ errorCode: 'VALIDATION_FAILED', message: 'Malformed JSON in request body' }] });
  });

  it('calls a bare JSON value such as null what it is, not malformed', async () => {
    const { crmId, key } = await app.newCrm();
    for (const payload of ['null', ' "text"', '42', 'true']) {
      const res = await fetch(`${app.baseUrl}/crms/${crmId}/user`, {
        method: 'POST',
        headers: { 'X-SERVICE-CLIENT-ID': key, 'content-type': 'application/json' },
        body: payload,
      });
      expect(res.status, payload).toBe(400);
      expect(await res.json()).toEqual({ 'api-info': { version: '1' }, errors: [{ errorCode: 'VALIDATION_FAILED', message: 'The JSON request body must be an object' }] });
    }
  });

  it('names a path that is not valid percent-encoding, without echoing it', async () => {
    const { crmId, key } = await app.newCrm();
    const res = await fetch(`${app.baseUrl}/crms/${crmId}/user/%E0%A4%A`, { headers: { 'X-SERVICE-CLIENT-ID': key } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ 'api-info': { version: '1' }, errors: [{ errorCode: 'VALIDATION_FAILED', message: 'Malformed percent-encoding in the URL path' }] });
  });
});
