import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Clock } from '../services/kernel/clock.js';
import type { Config } from '../services/kernel/config.js';
import type { ContextRoot } from '../services/kernel/context.js';
import { QUEUES } from '../services/kernel/jobs.js';
import type { Logger } from '../services/kernel/logger.js';
import type { Orm } from '../services/kernel/orm.js';
import { createRedis } from '../services/kernel/redis.js';
import { createMailTransport, type MailTransport } from '../services/mail/mail-transport.js';
import { holdExpiryProcessor, sweepExpiredHolds } from './hold-expiry.processor.js';
import { mailProcessor } from './mail.processor.js';
import { OutboxRelay } from './outbox-relay.js';
import { createQueues } from './queues.js';

export interface WorkerDeps {
  config: Config;
  orm: Orm;
  clock: Clock;
  logger: Logger;
  /** Tests pass a transport; otherwise SMTP_URL or the .eml folder. */
  transport?: MailTransport;
  relayPollMs?: number;
  sweepMs?: number;
}

export interface RunningWorker {
  relay: OutboxRelay;
  stop(): Promise<void>;
}

/** Starts the outbox relay, one BullMQ Worker per queue and the periodic sweep of expired holds. */
export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const { config, orm, logger } = deps;
  const root: ContextRoot = { em: orm.em, clock: deps.clock, config, logger };
  const connections: Redis[] = [];
  const connect = (name: string) => {
    const redis = createRedis(config.redisUrl, { forWorker: true, name });
    connections.push(redis);
    return redis;
  };
  const transport = deps.transport ?? createMailTransport(config);
  const queues = createQueues(connect('worker-queues'), config.queuePrefix);
  const relay = new OutboxRelay({ orm, databaseUrl: config.databaseUrl, queues, publisher: connect('worker-publisher'), logger, pollMs: deps.relayPollMs });

  const workers = [
    new Worker(QUEUES.mail, mailProcessor(root, transport), { connection: connect('worker-mail'), prefix: config.queuePrefix, concurrency: 5 }),
    new Worker(QUEUES.holdExpiry, holdExpiryProcessor(root), { connection: connect('worker-hold-expiry'), prefix: config.queuePrefix, concurrency: 10 }),
  ];
  for (const worker of workers) {
    worker.on('failed', (job, error) => logger.warn('job failed', { queue: worker.name, jobId: job?.id, attempt: job?.attemptsMade, error: error.message }));
    worker.on('error', (error) => logger.warn('worker error', { queue: worker.name, error: error.message }));
  }
  await relay.start();

  // Catches holds whose expiry job was lost (e.g. Redis lost its data).
  const sweepMs = deps.sweepMs ?? 30_000;
  const sweep = setInterval(() => {
    sweepExpiredHolds(root).catch((error) => logger.warn('hold sweep failed', { error: String(error) }));
  }, sweepMs);
  sweep.unref();
  logger.info('worker started', { queues: Object.values(QUEUES) });

  return {
    relay,
    async stop() {
      clearInterval(sweep);
      await relay.stop();
      await Promise.all(workers.map((worker) => worker.close()));
      await Promise.all(Object.values(queues).map((queue) => queue.close()));
      for (const redis of connections) redis.disconnect();
      transport.close();
    },
  };
}
