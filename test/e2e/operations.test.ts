import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../schema/app.js';
import { type Config } from '../../services/kernel/config.js';
import { QUEUES } from '../../services/kernel/jobs.js';
import { createLogger } from '../../services/kernel/logger.js';
import { startWorkerHealthServer, type WorkerHealthServer } from '../../worker/health-server.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { apiClient, unique } from '../support/http.js';

interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

/** A second gateway on the test app's dependencies, with its own settings and a logger whose lines the test reads. */
async function observedGateway(app: TestApp, config: Partial<Config> = {}) {
  const lines: LogLine[] = [];
  const raw: string[] = [];
  const logger = createLogger('debug', { process: 'gateway' }, { destination: { write: (line: string) => void (raw.push(line), lines.push(JSON.parse(line) as LogLine)) } });
  const gateway: Gateway = await createGateway({ config: { ...app.config, ...config }, orm: app.orm, redis: app.redis, clock: app.clock, logger });
  const port = await gateway.listen(0, '127.0.0.1');
  return { gateway, baseUrl: `http://127.0.0.1:${port}`, lines, raw };
}

describe('liveness and readiness', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.close());

  it('/livez and /readyz answer 200 while PostgreSQL and Redis answer', async () => {
    expect(await app.anonymous.get('/livez')).toMatchObject({ status: 200, body: { ok: true, pid: process.pid } });
    expect(await app.anonymous.get('/readyz')).toMatchObject({ status: 200, body: { ok: true, checks: { postgres: 'ok', redis: 'ok' } } });
  });

  it('/readyz turns 503 the moment shutdown begins, while /livez and the API still answer', async () => {
    const { gateway, baseUrl } = await observedGateway(app, { shutdownDelayMs: 1500 });
    const client = apiClient(baseUrl);
    expect((await client.get('/readyz')).status).toBe(200);
    const closing = gateway.close();
    try {
      expect(await client.get('/readyz')).toMatchObject({ status: 503, body: { ok: false, shuttingDown: true } });
      expect((await client.get('/livez')).status).toBe(200);
      expect((await client.get('/products/unknown/public_data')).status).toBeLessThan(500);
    } finally {
      await closing;
    }
  });
});

describe('request ids and the access log', () => {
  let app: TestApp;
  let observed: Awaited<ReturnType<typeof observedGateway>>;
  beforeAll(async () => {
    app = await startTestApp();
    observed = await observedGateway(app);
  });
  afterAll(async () => {
    await observed?.gateway.close();
    await app?.close();
  });

  it('echoes a sane X-Request-Id and makes one when it is missing or unusable', async () => {
    const client = apiClient(observed.baseUrl);
    expect((await client.get('/livez', { 'X-Request-Id': 'trace-abc.123' })).headers.get('x-request-id')).toBe('trace-abc.123');
    const made = (await client.get('/livez')).headers.get('x-request-id');
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
    const replaced = (await client.get('/livez', { 'X-Request-Id': 'bad id with spaces' })).headers.get('x-request-id');
    expect(replaced).not.toBe('bad id with spaces');
    expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('writes one access line per request with method, route pattern, status, duration, request id and CRM', async () => {
    const { crmId, key } = await app.newCrm();
    const client = apiClient(observed.baseUrl, key);
    const requestId = unique('req');
    const email = `${unique('anna')}@example.com`;
    const res = await client.post(
      `/crms/${crmId}/user`,
      { reference: unique('u'), email, username: unique('anna'), lastName: 'Agent', firstName: 'Anna', mobile: '+49 170 1234567' },
      { 'X-Request-Id': requestId },
    );
    expect(res.status).toBe(201);
    await expect.poll(() => observed.lines.filter((line) => line.requestId === requestId && line.msg === 'request')).toHaveLength(1);
    const access = observed.lines.find((line) => line.requestId === requestId && line.msg === 'request')!;
    expect(access).toMatchObject({ level: 'info', method: 'POST', route: '/crms/:crmId/user', status: 201, crmId, process: 'gateway' });
    expect(access.durationMs).toEqual(expect.any(Number));
    // No personal data in any line.
    expect(observed.raw.join('')).not.toContain(email);
    expect(observed.raw.join('')).not.toContain('1234567');
  });

  it('logs an unknown path under one route label, and health probes at debug level', async () => {
    const client = apiClient(observed.baseUrl);
    const requestId = unique('req');
    expect((await client.get(`/no/such/${unique('p')}`, { 'X-Request-Id': requestId })).status).toBe(404);
    await expect.poll(() => observed.lines.find((line) => line.requestId === requestId)).toMatchObject({ route: 'unmatched', status: 404, level: 'info' });
    const probe = unique('req');
    await client.get('/readyz', { 'X-Request-Id': probe });
    await expect.poll(() => observed.lines.find((line) => line.requestId === probe)).toMatchObject({ route: '/readyz', status: 200, level: 'debug' });
  });
});

describe('GET /metrics', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.close());

  it('answers Prometheus text with request histograms by route and status, and the rejection counter', async () => {
    await app.anonymous.get('/livez');
    const { crmId, api } = await app.newCrm();
    const reference = unique('u');
    const user = { reference, email: `${unique('a')}@example.com`, username: unique('a'), lastName: 'A', firstName: 'A' };
    expect((await api.post(`/crms/${crmId}/user`, user)).status).toBe(201);
    // The same person under another reference: 409.
    expect((await api.post(`/crms/${crmId}/user`, { ...user, reference: unique('u') })).status).toBe(409);
    const res = await app.anonymous.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(res.text).toMatch(/booking_http_request_duration_seconds_count\{method="GET",route="\/livez",status="200"\} [1-9]/);
    expect(res.text).toMatch(/booking_http_request_duration_seconds_count\{method="POST",route="\/crms\/:crmId\/user",status="409"\} [1-9]/);
    expect(res.text).toMatch(/booking_rejected_requests_total\{status="409",code="[A-Z_]+"\} [1-9]/);
    for (const name of ['booking_graphql_request_duration_seconds', 'booking_bookings_total', 'booking_holds_created_total', 'booking_holds_expired_total', 'booking_websocket_connections', 'booking_websocket_subscriptions', 'booking_transaction_retries_total', 'booking_mail_failures_total']) {
      expect(res.text).toContain(`# TYPE ${name} `);
    }
  });

  it('times GraphQL operations by operation type, root field and outcome', async () => {
    const { key } = await app.newCrm();
    const client = apiClient(app.baseUrl, key);
    expect((await client.graphql('{ staff(providerReference: "nobody@crm") { email } }')).status).toBe(200);
    expect((await client.graphql('{ provider(reference: "nobody@crm") { uuid } }')).body).toEqual({ data: { provider: null } });
    const text = (await app.anonymous.get('/metrics')).text;
    expect(text).toMatch(/booking_graphql_request_duration_seconds_count\{operation="query",field="staff",status="NOT_FOUND"\} [1-9]/);
    // A single lookup of something unknown answers null: a success, not an error.
    expect(text).toMatch(/booking_graphql_request_duration_seconds_count\{operation="query",field="provider",status="ok"\} [1-9]/);
  });

  it('asks for METRICS_TOKEN when one is set', async () => {
    const { gateway, baseUrl } = await observedGateway(app, { metricsToken: 'metrics-secret-1' });
    try {
      const client = apiClient(baseUrl);
      expect((await client.get('/metrics')).status).toBe(401);
      expect((await client.get('/metrics', { Authorization: 'Bearer wrong-token' })).status).toBe(401);
      const res = await client.get('/metrics', { Authorization: 'Bearer metrics-secret-1' });
      expect(res.status).toBe(200);
      expect(res.text).toContain('booking_http_request_duration_seconds');
    } finally {
      await gateway.close();
    }
  });
});

describe('queue dashboard /admin/queues', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.close());

  it('does not exist without ADMIN_TOKEN', async () => {
    expect((await app.anonymous.get('/admin/queues')).status).toBe(404);
  });

  it('needs ADMIN_TOKEN (Bearer or Basic) and then lists the queues of this deployment', async () => {
    const token = 'admin-secret-0123456789';
    const { gateway, baseUrl } = await observedGateway(app, { adminToken: token });
    try {
      const client = apiClient(baseUrl);
      const denied = await client.get('/admin/queues');
      expect(denied.status).toBe(401);
      expect(denied.headers.get('www-authenticate')).toContain('Basic');
      expect((await client.get('/admin/queues', { Authorization: 'Bearer not-the-token' })).status).toBe(401);
      const page = await client.get('/admin/queues', { Authorization: `Basic ${Buffer.from(`admin:${token}`).toString('base64')}` });
      expect(page.status).toBe(200);
      expect(page.text).toContain('<html');
      const api = await client.get('/admin/queues/api/queues', { Authorization: `Bearer ${token}` });
      expect(api.status).toBe(200);
      expect((api.body.queues as { name: string }[]).map((queue) => queue.name).sort()).toEqual(Object.values(QUEUES).sort());
    } finally {
      await gateway.close();
    }
  });
});

describe('worker health port (WORKER_HEALTH_PORT)', () => {
  let app: TestApp;
  let health: WorkerHealthServer;
  let client: ReturnType<typeof apiClient>;
  beforeAll(async () => {
    app = await startTestApp({ worker: { relayPollMs: 200 } });
    health = await startWorkerHealthServer({ port: 0, orm: app.orm, worker: app.worker!, logger: createLogger('silent'), metricsToken: undefined });
    client = apiClient(`http://127.0.0.1:${health.port}`);
  });
  afterAll(async () => {
    await health?.close();
    await app?.close();
  });

  it('/livez answers, /readyz is 200 while the relay and queue workers run', async () => {
    expect(await client.get('/livez')).toMatchObject({ status: 200, body: { ok: true } });
    expect(await client.get('/readyz')).toMatchObject({ status: 200, body: { ok: true, checks: { postgres: 'ok', redis: 'ok', worker: 'ok' } } });
  });

  it('/metrics reports queue depths per state and the outbox backlog and age', async () => {
    const text = (await client.get('/metrics')).text;
    for (const queue of Object.values(QUEUES)) {
      for (const state of ['waiting', 'active', 'delayed', 'failed']) expect(text).toMatch(new RegExp(`booking_queue_jobs\\{queue="${queue}",state="${state}"\\} \\d+`));
    }
    expect(text).toMatch(/^booking_outbox_backlog \d+$/m);
    expect(text).toMatch(/^booking_outbox_oldest_age_seconds [\d.e+-]+$/m);
  });

  it('/readyz turns 503 once the worker stops', async () => {
    health.draining();
    expect(await client.get('/readyz')).toMatchObject({ status: 503, body: { ok: false, checks: { worker: 'stopping' } } });
    expect((await client.get('/livez')).status).toBe(200);
  });
});
