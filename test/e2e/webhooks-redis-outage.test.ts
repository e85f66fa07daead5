import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '../../services/kernel/jobs.js';
import { createLogger } from '../../services/kernel/logger.js';
import { type RunningWorker, startWorker } from '../../worker/worker.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { isolatedDatabase } from '../support/isolated-database.js';
import { type RedisProcess, startRedisProcess } from '../support/redis-process.js';
import { createAppointment, setupScheduling, sql } from '../support/scheduling-fixtures.js';
import { eventually, WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Webhook deliveries while Redis is away (a private redis-server, SIGKILLed,
 * back empty on the same port): they wait in PostgreSQL and go out once it is
 * back, and a delivery whose queued job Redis lost is queued again by the sweep.
 */
describe('webhooks during a Redis outage', () => {
  let redis: RedisProcess;
  let app: TestApp;
  let worker: RunningWorker | undefined;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  const endpoint = new WebhookReceiver();

  beforeAll(async () => {
    redis = await startRedisProcess();
    db = await isolatedDatabase('webhook_outage');
    app = await startTestApp({ config: { redisUrl: redis.url, databaseUrl: db.url } });
    worker = await startWorker({
      config: app.config,
      orm: app.orm,
      clock: app.clock,
      logger: createLogger('silent'),
      relayPollMs: 200,
      sweepMs: 500,
      webhookStaleMs: 1000,
      webhookRetry: { attempts: 5, delayMs: 200 },
    });
    await endpoint.start();
  });
  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await endpoint.stop();
    await redis?.stop('SIGTERM');
    await db?.drop();
  });

  const register = async (f: Awaited<ReturnType<typeof setupScheduling>>) => {
    const res = await f.api.post(`/crms/${f.crmId}/webhooks`, { url: endpoint.url, events: ['appointment.cancelled'] });
    expect(res.status).toBe(201);
    return res.body.webhook.id as string;
  };
  const statuses = async (webhookId: string) => (await sql<{ status: string }>(app, `select status from webhook_delivery where webhook_id = ?`, [webhookId])).map((r) => r.status);

  it('keeps the events of changes made while Redis is down and delivers each once when it is back', { timeout: 60_000 }, async () => {
    const f = await setupScheduling(app);
    const webhookId = await register(f);
    const appointments = [await createAppointment(f), await createAppointment(f, { start: '2027-03-01T12:00', end: '2027-03-01T13:00' })];

    await redis.stop();
    for (const appointment of appointments) {
      expect((await f.api.delete(`${f.base}/appointments`, { appointmentReference: appointment.reference })).status).toBe(200);
    }
    const [pending] = await sql<{ n: string }>(app, `select count(*) as n from outbox_message where dispatched_at is null and topic = 'appointment-changed'`);
    expect(Number(pending!.n)).toBe(2);
    expect(endpoint.received.filter((d) => d.json.crmId === f.crmId)).toEqual([]);

    await redis.start();
    await eventually(async () => (await statuses(webhookId)).join() === 'SUCCEEDED,SUCCEEDED', 30_000, 'both deliveries');
    const mine = endpoint.received.filter((d) => d.json.crmId === f.crmId);
    expect(mine.map((d) => d.json.data.appointmentReference).sort()).toEqual(appointments.map((a) => a.reference).sort());
  });

  it('queues again a delivery whose job Redis lost', { timeout: 60_000 }, async () => {
    const f = await setupScheduling(app);
    const webhookId = await register(f);
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    connection.on('error', () => undefined);
    const queue = new Queue(QUEUES.webhook, { connection, prefix: app.config.queuePrefix });
    queue.on('error', () => undefined);
    try {
      await queue.pause();
      const appointment = await createAppointment(f);
      expect((await f.api.delete(`${f.base}/appointments`, { appointmentReference: appointment.reference })).status).toBe(200);
      await eventually(async () => (await queue.getWaitingCount()) >= 1, 10_000, 'the job waiting in the paused queue');
      expect(await statuses(webhookId)).toEqual(['PENDING']);
      await redis.stop();
      await redis.start();
      await eventually(async () => (await statuses(webhookId)).join() === 'SUCCEEDED', 30_000, 'the delivery after the sweep');
      expect(endpoint.received.filter((d) => d.json.crmId === f.crmId)).toHaveLength(1);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });
});
