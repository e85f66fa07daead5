import 'reflect-metadata';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGateway, type Gateway } from '../../schema/app.js';
import { createCrm } from '../../services/crm/crm.service.js';
import { SettableClock } from '../../services/kernel/clock.js';
import { type Config, loadConfig } from '../../services/kernel/config.js';
import { type ContextRoot, createContext, type Context } from '../../services/kernel/context.js';
import { createLogger } from '../../services/kernel/logger.js';
import { initOrm, type Orm, startupOptions } from '../../services/kernel/orm.js';
import { createRedisClient, type RedisClient } from '../../services/kernel/redis.js';
import type { MailTransport } from '../../services/mail/mail-transport.js';
import type { RetryPolicy } from '../../worker/queues.js';
import { type RunningWorker, startWorker } from '../../worker/worker.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from './env.js';
import { isolatedDatabase } from './isolated-database.js';
import { apiClient, type ApiClient, unique } from './http.js';

export interface TestApp {
  baseUrl: string;
  config: Config;
  orm: Orm;
  /** The configured Redis (a Cluster client when `redisClusterNodes` is set). */
  redis: RedisClient;
  clock: SettableClock;
  gateway: Gateway;
  worker?: RunningWorker;
  /** A public (unauthenticated) client. */
  anonymous: ApiClient;
  /** Creates a CRM integration and returns a client that sends its key. */
  newCrm(crmId?: string): Promise<{ crmId: string; key: string; api: ApiClient }>;
  context(): Context;
  close(): Promise<void>;
}

export interface TestAppOptions {
  config?: Partial<Config>;
  /**
   * Let the test clock run from this instant instead of the real time (it still advances with
   * real time; `clock.reset()` returns to it). For suites with hard-coded dates, so they keep
   * lying in the future whatever the real date is.
   */
  clockAt?: string;
  /** Also run the worker (relay, mail, hold expiry) in this process. */
  worker?: boolean | { transport?: MailTransport; relayPollMs?: number; sweepMs?: number; webhookRetry?: RetryPolicy; webhookStaleMs?: number };
}

/** Starts a real gateway (and optionally the worker) on a free port against the test database and Redis. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  // A worker relays every pending outbox row of its database, so an app with a worker gets a database of its own.
  const isolated = options.worker && !options.config?.databaseUrl ? await isolatedDatabase(unique('w')) : undefined;
  const config = loadConfig(
    {
      DATABASE_URL: isolated?.url ?? TEST_DATABASE_URL,
      REDIS_URL: TEST_REDIS_URL,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      QUEUE_PREFIX: unique('test'),
      MAIL_DIR: join(tmpdir(), 'booking-test-mail'),
      // Mail at once: tests wait for it (the delay itself: test/e2e/mail-delay.test.ts).
      MAIL_DELAY_MS: '0',
      // Hundreds of tests book from one loopback address: the public flow's limits are off unless a test
      // turns them on (config.rateLimits), and so is the cap on open WebSocket connections per IP.
      PUBLIC_RATE_LIMIT: 'off',
      WS_MAX_CONNECTIONS_PER_IP: '100000',
    },
    options.config,
  );
  const orm = await initOrm(config.databaseUrl, { pool: { min: 0, max: options.config?.databasePool?.max ?? 20 } }, undefined, startupOptions(config));
  const redis = createRedisClient(config, { name: 'test-gateway' });
  const clock = options.clockAt ? new AnchoredClock(options.clockAt) : new SettableClock();
  const logger = createLogger(config.logLevel);
  const gateway = await createGateway({ config, orm, redis, clock, logger });
  const port = await gateway.listen(0, '127.0.0.1');
  const baseUrl = `http://127.0.0.1:${port}`;
  const workerOptions = typeof options.worker === 'object' ? options.worker : {};
  const worker = options.worker ? await startWorker({ config, orm, clock, logger, ...workerOptions }) : undefined;
  const root: ContextRoot = { em: orm.em, clock, config, logger };
  return {
    baseUrl,
    config,
    orm,
    redis,
    clock,
    gateway,
    worker,
    anonymous: apiClient(baseUrl),
    async newCrm(crmId = unique('crm')) {
      const { key } = await createCrm(orm.em.fork(), crmId);
      return { crmId, key, api: apiClient(baseUrl, key) };
    },
    context: () => createContext(root, { actor: { kind: 'system', name: 'test' } }),
    async close() {
      await worker?.stop();
      await gateway.close();
      redis.disconnect();
      await orm.close(true);
      await isolated?.drop();
    },
  };
}

/**
 * The instant suites with hard-coded dates (2027-…) run at: their dates lie ahead of it, and the
 * real date does not matter.
 */
export const TEST_EPOCH = '2026-06-01T00:00:00Z';

/** A settable clock that runs from a fixed instant; `reset()` goes back to running from that instant. */
class AnchoredClock extends SettableClock {
  private readonly offsetFromReal: number;

  constructor(anchor: string) {
    super();
    this.offsetFromReal = Date.parse(anchor) - Date.now();
    this.advance(this.offsetFromReal);
  }

  override reset(): void {
    super.reset();
    this.advance(this.offsetFromReal);
  }
}
