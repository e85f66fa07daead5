import { type Job, type Queue, Worker } from 'bullmq';
import type { Clock } from '../services/kernel/clock.js';
import type { Config } from '../services/kernel/config.js';
import { redisCalendarVersions } from '../services/kernel/calendar-version.js';
import type { ContextRoot } from '../services/kernel/context.js';
import { MAINTENANCE_JOBS, type MaintenanceJobName, QUEUES } from '../services/kernel/jobs.js';
import { addGaugeSource, type GaugeSample } from '../services/kernel/metrics.js';
import { OUTBOX_RETENTION_MS, pruneDispatchedOutbox } from '../services/outbox/outbox.service.js';
import { analyzeStaleTables, autovacuumOn, TABLE_STATISTICS_INTERVAL_MS } from '../services/kernel/table-statistics.js';
import type { Logger } from '../services/kernel/logger.js';
import type { Orm } from '../services/kernel/orm.js';
import { createRedisClient, type RedisClient } from '../services/kernel/redis.js';
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
  /** How often expired holds and lost mail jobs are looked for (once per interval across all workers). */
  sweepMs?: number;
  /** How often dispatched outbox rows past their retention are deleted (once per interval across all workers). */
  pruneMs?: number;
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
  /** The Redis connection of the queues (health checks). */
  redis: RedisClient;
  /** The relay runs and every BullMQ worker takes jobs. */
  running(): boolean;
  /** Runs the hold sweep and the lost-mail sweep once, now, in this process. */
  sweep(): Promise<void>;
  /** Finishes the jobs in progress, then stops; nothing new is taken. */
  stop(): Promise<void>;
}

/**
 * Starts the outbox relay, one BullMQ Worker per queue and the periodic
 * maintenance (expired holds whose job was lost, mails whose job was lost,
 * the outbox prune) as BullMQ job schedulers: however many workers run, each
 * interval's run is one job, taken by one of them.
 */
export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const { config, orm, logger } = deps;
  const connections: RedisClient[] = [];
  const connect = (name: string, forWorker: boolean) => {
    const redis = createRedisClient(config, { forWorker, name });
    connections.push(redis);
    return redis;
  };
  const calendar = redisCalendarVersions(connect('worker-calendar', false), config.queuePrefix);
  const root: ContextRoot = { em: orm.em, clock: deps.clock, config, logger, calendar };
  const transport = deps.transport ?? createMailTransport(config);
  // Queue and publisher fail fast while Redis is away, so the relay rolls back and retries
  // instead of holding its transaction open until Redis returns.
  const queueConnection = connect('worker-queues', false);
  const queues = createQueues(queueConnection, config.queuePrefix, { mail: deps.mailRetry, webhook: deps.webhookRetry });
  const relay = new OutboxRelay({
    orm,
    databaseUrl: config.directDatabaseUrl,
    queues,
    publisher: connect('worker-publisher', false),
    channelPrefix: config.queuePrefix,
    calendar,
    logger,
    pollMs: deps.relayPollMs,
    mailDelayMs: config.mailDelayMs,
  });

  // A SIGKILLed worker's jobs come back after lockMs; a job may stall several times (crashes, Redis outages)
  // before it counts as failed, since mail_delivery keeps a re-run from sending twice.
  const lockMs = deps.lockMs ?? 15_000;
  const common = { prefix: config.queuePrefix, lockDuration: lockMs, stalledInterval: lockMs, maxStalledCount: 5 };
  const mailWorker = new Worker<MailJobData>(QUEUES.mail, mailProcessor(root, transport), { ...common, connection: connect('worker-mail', true), concurrency: 5 });
  const holdWorker = new Worker(QUEUES.holdExpiry, holdExpiryProcessor(root), { ...common, connection: connect('worker-hold-expiry', true), concurrency: 10 });
  const webhookWorker = new Worker(QUEUES.webhook, webhookProcessor(root), { ...common, connection: connect('worker-webhook', true), concurrency: 10 });
  const maintenanceWorker = new Worker<unknown, unknown, MaintenanceJobName>(QUEUES.maintenance, (job) => runMaintenance(job), {
    ...common,
    connection: connect('worker-maintenance', true),
    concurrency: 1,
  });
  const workers = [mailWorker, holdWorker, webhookWorker, maintenanceWorker];
  for (const worker of workers) {
    worker.on('failed', (job, error) => logger.warn('job failed', { queue: worker.name, jobId: job?.id, attempt: job?.attemptsMade, error: error.message }));
    worker.on('error', (error) => logger.warn('worker error', { queue: worker.name, error: error.message }));
  }
  mailWorker.on('failed', (job, error) => {
    onMailJobFailed(root, job, error).catch((failure) => logger.warn('could not record a failed mail', { jobId: job?.id, error: String(failure) }));
  });
  await relay.start();

  const mailStaleMs = deps.mailStaleMs ?? 60_000;
  const holdSweep = async () => {
    const holds = await sweepExpiredHolds(root);
    const mails = await recoverLostMails(root, queues[QUEUES.mail]!, mailStaleMs);
    await recoverLostWebhookJobs(root, queues[QUEUES.webhook]!, deps.webhookStaleMs ?? 300_000);
    return { holds, ...mails };
  };
  const outboxPrune = async () => {
    await pruneWebhookDeliveries(root, new Date(deps.clock.now().getTime() - WEBHOOK_DELIVERY_RETENTION_MS));
    return { pruned: await pruneDispatchedOutbox(orm.em.fork(), new Date(deps.clock.now().getTime() - OUTBOX_RETENTION_MS)) };
  };
  const tableStatistics = async () => ({ analyzed: await analyzeStaleTables(orm.em.fork()) });
  const maintenanceRuns: Record<MaintenanceJobName, () => Promise<object>> = {
    [MAINTENANCE_JOBS.holdSweep]: holdSweep,
    [MAINTENANCE_JOBS.outboxPrune]: outboxPrune,
    [MAINTENANCE_JOBS.tableStatistics]: tableStatistics,
  };
  async function runMaintenance(job: Job<unknown, unknown, MaintenanceJobName>) {
    const result = await maintenanceRuns[job.name]();
    // One line per run: across all workers there is one per interval.
    logger.debug('maintenance ran', { job: job.name, jobId: job.id, ...result });
    return result;
  }
  const maintenance = queues[QUEUES.maintenance]!;
  const schedules = [
    { id: MAINTENANCE_JOBS.holdSweep, every: deps.sweepMs ?? 30_000 },
    { id: MAINTENANCE_JOBS.outboxPrune, every: deps.pruneMs ?? 3_600_000 },
    { id: MAINTENANCE_JOBS.tableStatistics, every: TABLE_STATISTICS_INTERVAL_MS },
  ];
  const upsert = (schedule: (typeof schedules)[number]) => maintenance.upsertJobScheduler(schedule.id, { every: schedule.every }, { name: schedule.id });
  // Upserting the same scheduler from every worker is idempotent (its jobs' ids come from the scheduler and the
  // interval), so each interval's run is one job whichever workers upserted; the interval is the last writer's.
  // Redis away at start: the check below puts them in place once it is back; the worker starts regardless.
  await Promise.all(schedules.map(upsert)).catch((error) => logger.warn('could not schedule the maintenance yet', { error: String(error) }));
  // Redis may lose its data (restarted without persistence): put a lost scheduler back, or the sweep that
  // recovers lost mail jobs would be lost with them.
  const restoreSchedulers = async () => {
    for (const schedule of schedules) if (!(await maintenance.getJobScheduler(schedule.id))) await upsert(schedule);
  };
  const schedulerCheck = setInterval(() => void restoreSchedulers().catch(() => undefined), Math.min(deps.sweepMs ?? 30_000, 30_000));
  schedulerCheck.unref();

  let sweeping: Promise<void> | undefined;
  const sweep = (): Promise<void> => {
    sweeping ??= holdSweep()
      .then(outboxPrune)
      .then(
        () => undefined,
        (error) => logger.warn('sweep failed', { error: String(error) }),
      )
      .finally(() => (sweeping = undefined));
    return sweeping;
  };

  const removeGauges = addGaugeSource(() => workerGauges(orm, queues));
  logger.info('worker started', { queues: Object.values(QUEUES) });
  if (!(await autovacuumOn(orm.em.fork()).catch(() => true))) {
    logger.warn('autovacuum is off: the worker analyzes changed tables itself (planner statistics); dead rows need a VACUUM by the operator');
  }

  return {
    relay,
    redis: queueConnection,
    running: () => relay.running && workers.every((worker) => worker.isRunning()),
    sweep,
    async stop() {
      clearInterval(schedulerCheck);
      removeGauges();
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

/** Queue depths per state and the outbox backlog, read when Prometheus scrapes; a dependency that does not answer leaves its gauges out. */
async function workerGauges(orm: Orm, queues: Record<string, Queue>): Promise<GaugeSample[]> {
  const samples: GaugeSample[] = [];
  await Promise.all([
    ...Object.entries(queues).map(async ([name, queue]) => {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed').catch(() => undefined);
      for (const [state, value] of Object.entries(counts ?? {})) samples.push({ name: 'booking_queue_jobs', labels: { queue: name, state }, value });
    }),
    orm.em
      .fork()
      .execute<{ backlog: number; age: number }[]>(
        `select count(*)::int as backlog, coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as age
           from outbox_message where dispatched_at is null`,
      )
      .then(([row]) => {
        samples.push({ name: 'booking_outbox_backlog', value: Number(row?.backlog ?? 0) });
        samples.push({ name: 'booking_outbox_oldest_age_seconds', value: Math.max(0, Number(row?.age ?? 0)) });
      })
      .catch(() => undefined),
  ]);
  return samples;
}
