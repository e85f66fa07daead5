import type { Queue } from 'bullmq';
import type { RedisClient } from '../services/kernel/redis.js';
import pg from 'pg';
import type { CalendarVersions } from '../services/kernel/calendar-version.js';
import { liveChannel, TOPICS } from '../services/kernel/jobs.js';
import type { Logger } from '../services/kernel/logger.js';
import type { Orm } from '../services/kernel/orm.js';
import { recordMailsQueued } from '../services/mail/mail-delivery.service.js';
import { OUTBOX_CHANNEL } from '../services/outbox/outbox.service.js';
import { fanOutWebhookDeliveries, WEBHOOK_TOPIC } from '../services/webhooks/webhook-events.js';

interface PendingRow {
  id: string;
  kind: 'mail' | 'event' | 'job';
  topic: string;
  payload: Record<string, unknown>;
  run_at: Date | null;
}

export interface RelayDeps {
  orm: Orm;
  /** A direct connection (not PgBouncer in transaction mode, which cannot LISTEN). */
  databaseUrl: string;
  queues: Record<string, Queue>;
  publisher: RedisClient;
  /** QUEUE_PREFIX: events go to the channel `<prefix>:<topic>`. */
  channelPrefix: string;
  /** Change counters of the listing caches, moved again for every published capacity event (the writer's own bump may have been lost with its process). */
  calendar?: CalendarVersions;
  logger: Logger;
  /** Safety-net poll interval; commits wake the relay at once through LISTEN/NOTIFY. */
  pollMs?: number;
  batchSize?: number;
  /** A mail job waits at least this long (MAIL_DELAY_MS): a burst's bookings are answered before their mail takes the cores. */
  mailDelayMs?: number;
}

/** Job id of the BullMQ job made from an outbox row: the same row always gives the same id. */
export const jobIdFor = (row: { id: string; kind: string; topic: string; payload: Record<string, unknown> }): string =>
  row.topic === 'hold-expiry'
    ? `hold-${String(row.payload.participationId)}`
    : row.topic === WEBHOOK_TOPIC
      ? webhookJobIdFor(String(row.payload.deliveryId))
      : `${row.topic}-${row.id}`;

/** Job id of a webhook delivery's job, the same from the relay and from the sweep that re-queues lost ones. */
export const webhookJobIdFor = (deliveryId: string): string => `${WEBHOOK_TOPIC}-${deliveryId}`;

/** Job id of the mail job made from the outbox row `outboxId`. */
export const mailJobIdFor = (outboxId: string): string => jobIdFor({ id: outboxId, kind: 'mail', topic: 'mail', payload: {} });

/**
 * Moves committed outbox rows to BullMQ and Redis pub/sub. Rows are claimed
 * with FOR UPDATE SKIP LOCKED, so several relays share the work; a row is
 * marked dispatched only in the transaction that handed it over, and job ids
 * come from the row, so a retry never queues a second job.
 */
export class OutboxRelay {
  private listener: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private failures = 0;
  private wakeUp: (() => void) | undefined;
  private readonly pollMs: number;
  private readonly batchSize: number;

  constructor(private readonly deps: RelayDeps) {
    this.pollMs = deps.pollMs ?? 1000;
    this.batchSize = deps.batchSize ?? 100;
  }

  /** Started and not stopped: it dispatches (by NOTIFY, or by polling while its LISTEN connection is away). */
  get running(): boolean {
    return this.timer !== undefined && !this.stopped;
  }

  async start(): Promise<void> {
    await this.listen();
    this.timer = setInterval(() => this.kick(), this.pollMs);
    this.kick();
  }

  /** Stops polling and listening after the batch in progress; a back-off pause ends at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.wakeUp?.();
    await this.draining;
    await this.listener?.end().catch(() => undefined);
  }

  /** Drains now, or once more after the drain in progress. */
  kick(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.deps.databaseUrl });
    client.on('notification', () => this.kick());
    client.on('error', (error) => {
      this.deps.logger.warn('outbox listener lost its connection; polling until it is back', { error: error.message });
      this.listener = undefined;
      setTimeout(() => void this.reconnect(), 1000).unref();
    });
    await client.connect();
    await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
    this.listener = client;
  }

  private async reconnect(): Promise<void> {
    if (this.stopped || this.listener) return;
    try {
      await this.listen();
    } catch {
      setTimeout(() => void this.reconnect(), 2000).unref();
    }
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopped && (await this.dispatchBatch()) === this.batchSize) {
        // A full batch: there may be more.
      }
      this.failures = 0;
    } catch (error) {
      this.failures++;
      this.deps.logger.warn('outbox relay could not dispatch; rows stay pending', {
        error: error instanceof Error ? error.message : String(error),
        failures: this.failures,
      });
      // Back off while Redis or PostgreSQL is away; the poll timer retries.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(200 * 2 ** this.failures, 5000));
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  /** Dispatches one batch in one transaction; returns how many rows it handled. */
  private async dispatchBatch(): Promise<number> {
    const em = this.deps.orm.em.fork();
    return em.transactional(async (tx) => {
      const rows = await tx.execute<PendingRow[]>(
        `select id, kind, topic, payload, run_at from outbox_message
          where dispatched_at is null order by id limit ? for update skip locked`,
        [this.batchSize],
      );
      await this.dispatch(rows);
      // Appointment changes become webhook deliveries (and their jobs' outbox rows) in this same transaction.
      await fanOutWebhookDeliveries(tx, rows);
      const touched = rows.filter((row) => row.topic === TOPICS.capacityChanged).map((row) => row.payload.resourceId);
      await this.deps.calendar?.bump(touched.filter((id): id is string => typeof id === 'string'));
      if (rows.length) {
        // In the same transaction: a mail is QUEUED exactly when its job exists (see the lost-mail sweep).
        await recordMailsQueued(tx, rows.filter((row) => row.kind === 'mail').map((row) => String(row.id)));
        // Rows marked personal (mail to an erased customer) keep no personal data once handed over.
        await tx.execute(
          `update outbox_message
              set dispatched_at = now(), attempts = attempts + 1,
                  payload = case when payload->>'personal' is not null then '{"erased": true}'::jsonb else payload end
            where id in (${rows.map(() => '?').join(',')})`,
          rows.map((row) => row.id),
        );
      }
      return rows.length;
    });
  }

  /**
   * Hands a batch over in few round trips: the events in id order in one
   * pipeline of PUBLISHes (first, so live calendars do not wait for jobs
   * being queued), then the jobs of each queue in one addBulk.
   */
  private async dispatch(rows: PendingRow[]): Promise<void> {
    const jobs = new Map<Queue, Parameters<Queue['addBulk']>[0]>();
    for (const row of rows) {
      if (row.kind === 'event') continue;
      const queue = this.deps.queues[row.topic];
      if (!queue) throw new Error(`outbox row ${row.id} names unknown queue ${row.topic}`);
      const runAt = row.run_at ? new Date(row.run_at).getTime() : 0;
      const earliest = row.kind === 'mail' ? (this.deps.mailDelayMs ?? 0) : 0;
      const job = { name: row.topic, data: { ...row.payload, outboxId: String(row.id) }, opts: { jobId: jobIdFor({ ...row, id: String(row.id) }), delay: Math.max(earliest, runAt - Date.now()) } };
      const batch = jobs.get(queue) ?? [];
      batch.push(job);
      jobs.set(queue, batch);
    }
    const events = rows.filter((row) => row.kind === 'event');
    if (events.length) {
      const pipeline = this.deps.publisher.pipeline();
      for (const row of events) pipeline.publish(liveChannel(this.deps.channelPrefix, row.topic), JSON.stringify(row.payload));
      for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
    }
    for (const [queue, batch] of jobs) await queue.addBulk(batch);
  }
}
