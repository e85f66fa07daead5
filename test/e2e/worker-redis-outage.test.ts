import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '../../services/kernel/jobs.js';
import { createLogger } from '../../services/kernel/logger.js';
import { type RunningWorker, startWorker } from '../../worker/worker.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { isolatedDatabase } from '../support/isolated-database.js';
import { bookSlot, setupMailProvider } from '../support/mail-fixtures.js';
import { type RedisProcess, startRedisProcess } from '../support/redis-process.js';
import { sql } from '../support/scheduling-fixtures.js';
import { type SmtpSink, startSmtpSink } from '../support/smtp-sink.js';
import { liveChannel, TOPICS } from '../../services/kernel/jobs.js';

/**
 * Redis goes away (SIGKILL of a private redis-server without persistence)
 * while bookings commit, and comes back empty on the same port. Gateway and
 * worker both use that Redis; the shared one on 6379 is never touched.
 */
describe('Redis outage while bookings commit', () => {
  let redis: RedisProcess;
  let app: TestApp;
  let sink: SmtpSink;
  let subscriber: Redis;
  let worker: RunningWorker | undefined;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  const heard: { appointmentId?: string }[] = [];

  beforeAll(async () => {
    redis = await startRedisProcess();
    sink = await startSmtpSink();
    db = await isolatedDatabase('redis_outage');
    app = await startTestApp({ config: { smtpUrl: sink.url, redisUrl: redis.url, databaseUrl: db.url } });
    // Short sweeps, so mails whose queued jobs died with Redis are found again within seconds.
    worker = await startWorker({ config: app.config, orm: app.orm, clock: app.clock, logger: createLogger('silent'), relayPollMs: 200, sweepMs: 500, mailStaleMs: 2000 });
    subscriber = new Redis(redis.url, { maxRetriesPerRequest: null });
    subscriber.on('error', () => undefined);
    await subscriber.subscribe(liveChannel(app.config.queuePrefix, TOPICS.capacityChanged));
    subscriber.on('message', (_channel, message) => heard.push(JSON.parse(message)));
  });
  afterAll(async () => {
    subscriber?.disconnect();
    await worker?.stop();
    await app?.close();
    await sink?.close();
    await redis?.stop('SIGTERM');
    await db?.drop();
  });

  it('delays the e-mails and capacity events of bookings made during the outage and loses none', { timeout: 120_000 }, async () => {
    const f = await setupMailProvider(app, { slots: 8, capacity: 3 });
    const before = [await bookSlot(app, f, 0), await bookSlot(app, f, 1)];
    for (const { email } of before) await sink.waitForMail(email);

    await redis.stop();
    // Bookings commit while Redis is down (the gateway needs Redis only for pub/sub and health).
    const during = [];
    for (let i = 0; i < 6; i++) during.push(await bookSlot(app, f, 2 + (i % 6), { locale: i % 2 ? 'en' : 'de' }));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    for (const { email } of during) expect(sink.to(email)).toHaveLength(0);
    const [pending] = await sql<{ n: string }>(
      app,
      `select count(*) as n from outbox_message where dispatched_at is null and kind = 'mail' and payload->'params'->>'participationId' in (${during.map(() => '?').join(',')})`,
      during.map((b) => b.participationId),
    );
    expect(Number(pending!.n)).toBe(during.length * 2);

    await redis.start();
    for (const { email } of during) await sink.waitForMail(email, 1, 30_000);
    await sink.waitFor(() => sink.to(f.providerEmail!).length >= before.length + during.length, 30_000, 'provider notifications');
    // Settle, then count: each consumer one confirmation, the provider one notification per booking, no Message-ID twice.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    for (const { email } of [...before, ...during]) expect(sink.to(email).map((m) => m.template)).toEqual(['booking-confirmation']);
    const providerMails = sink.to(f.providerEmail!);
    expect(providerMails).toHaveLength(before.length + during.length);
    expect(new Set(providerMails.map((m) => m.messageId)).size).toBe(providerMails.length);

    // The capacity events of the bookings made during the outage are published once Redis is back.
    const appointmentIds = new Set(during.map((b) => b.created.appointment_uuid as string));
    await expect.poll(() => [...appointmentIds].every((id) => heard.some((e) => e.appointmentId === id)), { timeout: 15_000 }).toBe(true);
  });

  it('a mail whose queued job died with Redis is queued again by the sweep', { timeout: 60_000 }, async () => {
    const f = await setupMailProvider(app, { slots: 2, capacity: 3 });
    // Pause the mail queue so the jobs wait in Redis, then let Redis lose them (and the pause).
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const mailQueue = new Queue(QUEUES.mail, { connection, prefix: app.config.queuePrefix });
    mailQueue.on('error', () => undefined);
    connection.on('error', () => undefined);
    try {
      await mailQueue.pause();
      const { email, participationId } = await bookSlot(app, f, 0);
      await expect
        .poll(async () => (await sql<{ status: string }>(app, `select status from mail_delivery where participation_id = ?`, [participationId])).map((r) => r.status), {
          timeout: 10_000,
        })
        .toEqual(['QUEUED', 'QUEUED']);
      expect(await mailQueue.getWaitingCount()).toBeGreaterThanOrEqual(2);
      await redis.stop();
      await redis.start();
      // The sweep finds QUEUED mails without a job and hands them back to the outbox; the worker sends them.
      await sink.waitForMail(email, 1, 30_000);
      await sink.waitFor(() => sink.to(f.providerEmail!).length >= 1, 30_000, 'provider notification');
      await expect
        .poll(async () => (await sql<{ status: string }>(app, `select status from mail_delivery where participation_id = ?`, [participationId])).map((r) => r.status), {
          timeout: 10_000,
        })
        .toEqual(['SENT', 'SENT']);
      expect(sink.to(email)).toHaveLength(1);
      expect(sink.to(f.providerEmail!)).toHaveLength(1);
    } finally {
      await mailQueue.close();
      connection.disconnect();
    }
  });
});
