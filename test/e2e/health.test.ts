import { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../schema/app.js';
import { createLogger } from '../../services/kernel/logger.js';
import { ormOptions } from '../../services/kernel/orm.js';
import { createRedis } from '../../services/kernel/redis.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { apiClient } from '../support/http.js';

/** Starts a second gateway on the test app's dependencies, with one of them replaced by a dead one. */
async function gatewayWith(app: TestApp, parts: Partial<Parameters<typeof createGateway>[0]>): Promise<{ gateway: Gateway; baseUrl: string }> {
  const gateway = await createGateway({ config: app.config, orm: app.orm, redis: app.redis, clock: app.clock, logger: silentLogger, ...parts });
  const port = await gateway.listen(0, '127.0.0.1');
  return { gateway, baseUrl: `http://127.0.0.1:${port}` };
}

const silentLogger = createLogger('silent');

describe('GET /healthz', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.close());

  it('200 with both checks ok when PostgreSQL and Redis answer', async () => {
    const res = await app.anonymous.get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, checks: { postgres: 'ok', redis: 'ok' }, pid: process.pid });
  });

  it('needs no key', async () => {
    expect((await apiClient(app.baseUrl, 'bk_wrong').get('/healthz')).status).toBe(200);
  });

  it('503 naming redis when Redis does not answer', async () => {
    const deadRedis = createRedis('redis://127.0.0.1:1', { name: 'dead-redis' });
    const { gateway, baseUrl } = await gatewayWith(app, { redis: deadRedis });
    try {
      const started = Date.now();
      const res = await apiClient(baseUrl).get('/healthz');
      expect(res.status).toBe(503);
      expect(res.body.ok).toBe(false);
      expect(res.body.checks.postgres).toBe('ok');
      // A fixed word, never the driver's message (host names, ports, SQL).
      expect(['timeout', 'unavailable']).toContain(res.body.checks.redis);
      expect(res.text).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|connect/);
      // The check is bounded (one second per dependency), so a load balancer gets its answer quickly.
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await gateway.close();
      deadRedis.disconnect();
    }
  });

  it('503 naming postgres when PostgreSQL does not answer', async () => {
    const deadOrm = await MikroORM.init(ormOptions('postgresql://postgres@127.0.0.1:1/booking_test_dead', { connect: false }));
    const { gateway, baseUrl } = await gatewayWith(app, { orm: deadOrm });
    try {
      const res = await apiClient(baseUrl).get('/healthz');
      expect(res.status).toBe(503);
      expect(res.body.ok).toBe(false);
      expect(res.body.checks.redis).toBe('ok');
      expect(res.body.checks.postgres).not.toBe('ok');
      expect(['timeout', 'unavailable']).toContain(res.body.checks.postgres);
    } finally {
      await gateway.close();
      await deadOrm.close(true);
    }
  });
});
