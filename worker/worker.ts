import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Clock } from '../services/kernel/clock.js';
import type { Config } from '../services/kernel/config.js';
import { redisCalendarVersions } from '../services/kernel/calendar-version.js';
import type { ContextRoot } from '../services/kernel/context.js';
import { QUEUES } from '../services/kernel/jobs.js';
import { OUTBOX_RETENTION_MS, pruneDispatchedOutbox } from '../services/outbox/outbox.service.js';
import type { Logger } from '../services/kernel/logger.js';
import type { Orm } from '../services/kernel/orm.js';
import { createRedis } from '../services/kernel/redis.js';
import { createMailTransport, type MailTransport } from '../services/mail/mail-transport.js';
import { holdExpiryProcessor, sweepExpiredHolds } from './hold-expiry.processor.js';
import { recoverLostMails } from './mail-recovery.js';
import { type MailJobData, mailProcessor, onMailJobFailed } from './mail.processor.js';
import { OutboxRelay } from './outbox-relay.js';
import { createQueues, type RetryPolicy } from './queues.js';
import { pruneWebhookDeliveries, WEBHOOK_DELIVERY_RETENTION_MS } from '../services/webhooks/webhook-delivery.service.js';
import { recoverLostWebhookJobs, webhookProcessor } from './webhook.processor.js';

export interface WorkerDeps {
  config: Config;
  orm: Orm;
  clock: Clock;
  logger: Logger;
  /** Tests pass a transport; otherwise SMTP_URL or the .eml folder. */
  transport?: MailTransport;
  relayPollMs?: number;
  /** How often expired holds and lost mail jobs are looked for. */
  sweepMs?: number;
  /** A mail whose state has not moved for this long is checked for a lost job. */
  mailStaleMs?: number;
  /** Tests shorten the mail retry policy (attempts, first back-off delay). */
  mailRetry?: RetryPolicy;
  /** Tests shorten the webhook retry policy. */
  webhookRetry?: RetryPolicy;
  /** A webhook delivery overdue this long is checked for a lost job (default 5 minutes). */
  webhookStaleMs?: number;
  /** How long a job stays locked without renewal before another worker takes it over (BullMQ lockDuration). */
  lockMs?: number;
}

export interface RunningWorker {
  relay: OutboxRelay;
  /** Runs the hold sweep and the lost-mail sweep once, now. */
  sweep(): Promise<void>;
  /** Finishes the jobs in progress, then stops; nothing new is taken. */
  stop(): Promise<void>;
}

/**
 * Starts the outbox relay, one BullMQ Worker per queue and the periodic
 * sweeps (expired holds whose job was lost, mails whose job was lost).
 */
export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const { config, orm, logger } = deps;
  const connections: Redis[] = [];
  const connect = (name: string, forWorker: boolean) => {
    const redis = createRedis(config.redisUrl, { forWorker, name });
    connections.push(redis);
    return redis;
  };
  const calendar = redisCalendarVersions(connect('worker-calendar', false), config.queuePrefix);
  const root: ContextRoot = { em: orm.em, clock: deps.clock, config, logger, calendar };
  const transport = deps.transport ?? createMailTransport(config);
  // Queue and publisher fail fast while Redis is away, so the relay rolls back and retries
  // instead of holding its transaction open until Redis returns.
  const queues = createQueues(connect('worker-queues', false), config.queuePrefix, { mail: deps.mailRetry, webhook: deps.webhookRetry });
  const relay = new OutboxRelay({ orm, databaseUrl: config.databaseUrl, queues, publisher: connect('worker-publisher', false), calendar, logger, pollMs: deps.relayPollMs });

  // A SIGKILLed worker's jobs come back after lockMs; a job may stall several times (crashes, Redis outages)
  // before it counts as failed, since mail_delivery keeps a re-run from sending twice.
  const lockMs = deps.lockMs ?? 15_000;
  const common = { prefix: config.queuePrefix, lockDuration: lockMs, stalledInterval: lockMs, maxStalledCount: 5 };
  const mailWorker = new Worker<MailJobData>(QUEUES.mail, mailProcessor(root, transport), { ...common, connection: connect('worker-mail', true), concurrency: 5 });
  const holdWorker = new Worker(QUEUES.holdExpiry, holdExpiryProcessor(root), { ...common, connection: connect('worker-hold-expiry', true), concurrency: 10 });
  const webhookWorker = new Worker(QUEUES.webhook, webhookProcessor(root), { ...common, connection: connect('worker-webhook', true), concurrency: 10 });
  const workers = [mailWorker, holdWorker, webhookWorker];
  for (const worker of workers) {
    worker.on('failed', (job, error) => logger.warn('job failed', { queue: worker.name, jobId: job?.id, attempt: job?.attemptsMade, error: error.message }));
    worker.on('error', (error) => logger.warn('worker error', { queue: worker.name, error: error.message }));
  }
  mailWorker.on('failed', (job, error) => {
    onMailJobFailed(root, job, error).catch((failure) => logger.warn('could not record a failed mail', { jobId: job?.id, error: String(failure) }));
  });
  await relay.start();

  const mailStaleMs = deps.mailStaleMs ?? 60_000;
  let sweeping: Promise<void> | undefined;
  const sweep = (): Promise<void> => {
    sweeping ??= (async () => {
      try {
        await sweepExpiredHolds(root);
        await recoverLostMails(root, queues[QUEUES.mail]!, mailStaleMs);
        await recoverLostWebhookJobs(root, queues[QUEUES.webhook]!, deps.webhookStaleMs ?? 300_000);
        await pruneWebhookDeliveries(root, new Date(deps.clock.now().getTime() - WEBHOOK_DELIVERY_RETENTION_MS));
        await pruneDispatchedOutbox(orm.em.fork(), new Date(deps.clock.now().getTime() - OUTBOX_RETENTION_MS));
      } catch (error) {
        logger.warn('sweep failed', { error: String(error) });
      } finally {
        sweeping = undefined;
      }
    })();
    return sweeping;
  };
  const timer = setInterval(() => void sweep(), deps.sweepMs ?? 30_000);
  timer.unref();
  logger.info('worker started', { queues: Object.values(QUEUES) });

  return {
    relay,
    sweep,
    async stop() {
      clearInterval(timer);
      await relay.stop();
      // close() waits for the jobs in progress to finish and takes no new ones.
      await Promise.all(workers.map((worker) => worker.close()));
      await sweeping;
      await Promise.all(Object.values(queues).map((queue) => queue.close()));
      for (const redis of connections) redis.disconnect();
      transport.close();
    },
  };
}
