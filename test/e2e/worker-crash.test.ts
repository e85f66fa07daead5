import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.js';
import { isolatedDatabase } from '../support/isolated-database.js';
import { bookSlot, type MailFixture, setupMailProvider } from '../support/mail-fixtures.js';
import { sql } from '../support/scheduling-fixtures.js';
import { type SmtpSink, startSmtpSink } from '../support/smtp-sink.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';

/**
 * Worker processes as they run in production (`node --import tsx
 * worker/main.ts`), against the test database, the test Redis and an
 * in-process SMTP sink; the gateway runs in the test process.
 */
describe('worker processes: SIGKILL mid-burst, graceful SIGTERM, several at once — every mail exactly once', () => {
  let app: TestApp;
  let sink: SmtpSink;
  const running: WorkerProcess[] = [];
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;

  const startWorker = async () => {
    const worker = await startWorkerProcess({
      DATABASE_URL: db.url,
      REDIS_URL: app.config.redisUrl,
      SMTP_URL: sink.url,
      QUEUE_PREFIX: app.config.queuePrefix,
    });
    running.push(worker);
    return worker;
  };

  /**
   * Books `count` places as different consumers, `parallel` at a time;
   * `after(n)` runs once n bookings have completed (e.g. to kill the worker).
   */
  const burst = async (f: MailFixture, count: number, after?: { n: number; run: () => Promise<void> | void }) => {
    const emails: string[] = [];
    let next = 0;
    let done = 0;
    let fired: Promise<void> | undefined;
    const parallel = 4;
    const slotCount = f.slots.length;
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (next < count) {
          // Bookings wait while `after` runs (e.g. until the worker is killed), then go on.
          if (fired) await fired;
          const i = next++;
          const { email } = await bookSlot(app, f, i % slotCount, { locale: i % 2 ? 'en' : 'de' });
          emails.push(email);
          done++;
          if (after && done === after.n) fired = Promise.resolve(after.run());
        }
      }),
    );
    await fired;
    return emails;
  };

  /** Waits for every expected mail and lets the workers settle, then checks that none is missing and none arrived twice. */
  const expectExactlyOnce = async (f: MailFixture, emails: string[]) => {
    const ours = () => sink.messages.filter((m) => m.to.some((to) => to === f.providerEmail!.toLowerCase() || emails.includes(to)));
    await sink.waitFor(() => ours().length >= emails.length * 2, 90_000, `${emails.length * 2} mails`);
    // Settled: no mail of this provider's participations is still on its way.
    await expect
      .poll(
        async () =>
          (
            await sql<{ open: string }>(
              app,
              `select count(*) as open from outbox_message o
                 join participation p on p.id::text = o.payload->'params'->>'participationId'
                 join appointment a on a.id = p.appointment_id
                 left join mail_delivery d on d.id = o.id
                where o.kind = 'mail' and a.crm_id = ? and (d.status is null or d.status <> 'SENT')`,
              [f.crmId],
            )
          )[0]!.open,
        { timeout: 30_000, interval: 200 },
      )
      .toBe('0');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const mails = ours();
    const ids = mails.map((m) => m.messageId);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i), 'mails that arrived twice').toEqual([]);
    expect(mails).toHaveLength(emails.length * 2);
    for (const email of emails) expect(sink.to(email).map((m) => m.template)).toEqual(['booking-confirmation']);
    expect(sink.to(f.providerEmail!).filter((m) => m.template === 'provider-booking-notification')).toHaveLength(emails.length);
  };

  beforeAll(async () => {
    sink = await startSmtpSink();
    db = await isolatedDatabase('worker_crash');
    app = await startTestApp({ config: { smtpUrl: sink.url, databaseUrl: db.url } });
  });
  afterEach(async () => {
    for (const worker of running.splice(0)) {
      worker.kill('SIGTERM');
      await Promise.race([worker.exited, new Promise((resolve) => setTimeout(resolve, 12_000))]);
      worker.kill('SIGKILL');
    }
  });
  afterAll(async () => {
    await app?.close();
    await sink?.close();
    await db?.drop();
  });

  it('SIGKILL in the middle of a burst, restart: every e-mail arrives exactly once', { timeout: 180_000 }, async () => {
    const f = await setupMailProvider(app, { slots: 10, capacity: 3 });
    const first = await startWorker();
    let killedAfter = 0;
    const emails = await burst(f, 24, {
      n: 8,
      run: async () => {
        // Mid-burst means mid-mailing too: the worker has sent something (bookings are faster than mails).
        await sink.waitFor(() => sink.messages.length > 0, 30_000, 'a first mail');
        killedAfter = sink.messages.length;
        first.kill('SIGKILL');
        expect(await first.exited).toBe('SIGKILL');
      },
    });
    expect(killedAfter).toBeGreaterThan(0);
    // Bookings went on while no worker ran: their mails wait in the outbox.
    // Mails whose SMTP exchange the kill cut off (typically 2-4 here) were never completed, so the new worker sends them once.
    await startWorker();
    await expectExactlyOnce(f, emails);
  });

  it('SIGTERM finishes the jobs in progress and exits 0; a new worker sends the rest, nothing twice', { timeout: 120_000 }, async () => {
    const f = await setupMailProvider(app, { slots: 10, capacity: 3 });
    const first = await startWorker();
    const emails = await burst(f, 20, {
      n: 6,
      run: async () => {
        first.kill('SIGTERM');
        expect(await first.exited).toBe(0);
        expect(first.output()).toContain('shutting down');
        // Nothing was left half-done: no mail is stuck in SENDING.
        const [row] = await sql<{ sending: string }>(
          app,
          `select count(*) as sending from mail_delivery d join participation p on p.id = d.participation_id where p.crm_id = ? and d.status = 'SENDING'`,
          [f.crmId],
        );
        expect(row!.sending).toBe('0');
      },
    });
    await startWorker();
    await expectExactlyOnce(f, emails);
  });

  it('two worker processes at once share the work and send nothing twice', { timeout: 120_000 }, async () => {
    const f = await setupMailProvider(app, { slots: 10, capacity: 3 });
    await Promise.all([startWorker(), startWorker()]);
    const emails = await burst(f, 30);
    await expectExactlyOnce(f, emails);
  });
});
