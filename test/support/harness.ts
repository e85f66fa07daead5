import 'reflect-metadata';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { createGateway, type Gateway } from '../../schema/app.js';
import { createCrm } from '../../services/crm/crm.service.js';
import { SettableClock } from '../../services/kernel/clock.js';
import { type Config, loadConfig } from '../../services/kernel/config.js';
import { type ContextRoot, createContext, type Context } from '../../services/kernel/context.js';
import { createLogger } from '../../services/kernel/logger.js';
import { initOrm, type Orm } from '../../services/kernel/orm.js';
import { createRedis } from '../../services/kernel/redis.js';
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
  redis: Redis;
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
    },
    options.config,
  );
  const orm = await initOrm(config.databaseUrl, { pool: { min: 0, max: 20 } });
  const redis = createRedis(config.redisUrl, { name: 'test-gateway' });
  const clock = new SettableClock();
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
