import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupBookable } from '../support/booking-fixtures.js';
import { startTestApp, type TestApp } from '../support/harness.js';

const DOCUMENTED_CORS = {
  'access-control-allow-credentials': 'true',
  'access-control-allow-methods': 'POST, GET, OPTIONS, PUT, DELETE',
  'access-control-allow-headers': 'Origin, X-Requested-With, Content-Type, Accept, Authorization, X-Auth-Token',
  'access-control-max-age': '36',
};

/** A raw HTTP request, so the Host header can be chosen (fetch does not allow it). */
function rawRequest(baseUrl: string, method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const url = new URL(baseUrl);
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('booking flow: CORS preflight and canonical host', () => {
  let app: TestApp;
  let canonical: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
    canonical = await startTestApp({ config: { canonicalHost: 'www.example.test' } });
  });
  afterAll(async () => {
    await app?.close();
    await canonical?.close();
  });

  it('answers the OPTIONS preflight of every consumer endpoint with the documented headers (Max-Age 36)', async () => {
    const f = await setupBookable(app);
    const paths = [
      `/resources/${f.resourceUuid}/upcoming_bookables`,
      `/rest/1/resources/${f.resourceUuid}/reserve_appointment`,
      `/resources/${encodeURIComponent(f.resourceRef)}/create_appointment_with_consumer`,
      '/products/active_products?ref=x',
      '/resources/public_data',
      '/cancel/some-token',
    ];
    for (const path of paths) {
      const res = await app.anonymous.request('OPTIONS', path, undefined, {
        Origin: 'https://widget.example.org',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type',
      });
      expect(res.status, path).toBe(200);
      expect(res.text).toBe('');
      for (const [name, value] of Object.entries(DOCUMENTED_CORS)) expect(res.headers.get(name), `${path} ${name}`).toBe(value);
      expect(res.headers.get('access-control-allow-origin')).toBe('https://widget.example.org');
    }
  });

  it('puts the CORS headers on the consumer answers themselves, errors included, and not on /crms', async () => {
    const f = await setupBookable(app);
    const ok = await app.anonymous.get(`/resources/${f.resourceUuid}/upcoming_bookables`, { Origin: 'https://widget.example.org' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-max-age')).toBe('36');
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://widget.example.org');
    const failed = await app.anonymous.post('/products/active_products', {}, { Origin: 'https://widget.example.org' });
    expect(failed.status).toBe(400);
    expect(failed.headers.get('access-control-allow-credentials')).toBe('true');
    const crm = await f.api.get(`/crms/${f.crmId}/provider/${encodeURIComponent(f.providerRef)}/products`, { Origin: 'https://widget.example.org' });
    expect(crm.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('redirects a request for another host to the canonical host with 301 when CANONICAL_HOST is set', async () => {
    const path = '/resources/abc%40test/upcoming_bookables?groupFormat=MMMM';
    const moved = await rawRequest(canonical.baseUrl, 'GET', path, { Host: 'example.test' });
    expect(moved.status).toBe(301);
    expect(moved.headers.location).toBe(`http://www.example.test${path}`);
    // The body of a redirected POST is lost: clients must use the canonical host.
    const post = await rawRequest(canonical.baseUrl, 'POST', '/resources/x/create_appointment_with_consumer', { Host: 'example.test', 'Content-Type': 'application/json' }, '{}');
    expect(post.status).toBe(301);
    expect(post.headers.location).toBe('http://www.example.test/resources/x/create_appointment_with_consumer');

    const right = await rawRequest(canonical.baseUrl, 'GET', path, { Host: 'www.example.test' });
    expect(right.status).toBe(404);
    const withPort = await rawRequest(canonical.baseUrl, 'GET', path, { Host: 'WWW.example.test:8080' });
    expect(withPort.status).toBe(404);
    const health = await rawRequest(canonical.baseUrl, 'GET', '/healthz', { Host: 'internal' });
    expect(health.status).toBe(200);
  });

  it('does not redirect by default', async () => {
    const res = await rawRequest(app.baseUrl, 'GET', '/resources/abc%40test/upcoming_bookables', { Host: 'example.test' });
    expect(res.status).toBe(404);
  });
});
