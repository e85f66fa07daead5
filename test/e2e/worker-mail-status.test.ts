import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../services/kernel/logger.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { isolatedDatabase } from '../support/isolated-database.js';
import { unique } from '../support/http.js';
import { addParticipation, createAppointment, createCustomer, setupScheduling, type SchedulingFixture } from '../support/scheduling-fixtures.js';
import { type SmtpSink, startSmtpSink } from '../support/smtp-sink.js';
import { type RunningWorker, startWorker } from '../../worker/worker.js';

const QUERY = `query ($p: String!, $r: String!) { mailDeliveries(providerReference: $p, participationReference: $r) { template recipient status attempts lastError updatedAt } }`;

interface Delivery {
  template: string;
  recipient: string | null;
  status: string;
  attempts: number;
  lastError: string | null;
  updatedAt: string;
}

describe('mail delivery status: retries, FAILED with reason, GraphQL mailDeliveries', () => {
  let app: TestApp;
  let sink: SmtpSink;
  let worker: RunningWorker | undefined;
  let f: SchedulingFixture;
  let appointmentReference: string;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;

  const deliveries = async (reference: string, api = f.api): Promise<Delivery[]> => {
    const res = await api.graphql<{ mailDeliveries: Delivery[] }>(QUERY, { p: f.providerRef, r: reference });
    expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
    return res.body.data!.mailDeliveries;
  };
  const waitForStatus = async (reference: string, status: string, timeoutMs = 15_000): Promise<Delivery[]> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = await deliveries(reference);
      if (found.length && found.every((d) => d.status === status)) return found;
      if (Date.now() > until) throw new Error(`expected ${status}, got ${JSON.stringify(found)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const book = async (email: string) => {
    const customerReference = await createCustomer(f, { userName: 'Mia Mail', email });
    const { res, reference } = await addParticipation(f, appointmentReference, { customerReference, state: 'BOOKED' });
    expect(res.status).toBe(201);
    return reference;
  };

  /** The worker, started by the first test that needs it (the first test needs none at first): each test stands alone. */
  const ensureWorker = async () => {
    worker ??= await startWorker({
      config: app.config,
      orm: app.orm,
      clock: app.clock,
      logger: createLogger('silent'),
      relayPollMs: 200,
      mailRetry: { attempts: 3, delayMs: 100 },
    });
  };

  beforeAll(async () => {
    sink = await startSmtpSink();
    // The worker is started by hand below, with a short retry policy.
    db = await isolatedDatabase('mail_status');
    app = await startTestApp({ config: { smtpUrl: sink.url, databaseUrl: db.url } });
    f = await setupScheduling(app);
    appointmentReference = (await createAppointment(f, { capacity: 50 })).reference;
  });
  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await sink?.close();
    await db?.drop();
  });

  it('a mail committed while no worker runs is PENDING, then SENT once a worker runs (SKIPPED when the address is gone meanwhile)', async () => {
    const email = `${unique('mia')}@example.com`;
    const reference = await book(email);
    const pending = await deliveries(reference);
    expect(pending).toEqual([{ template: 'PARTICIPATION_BOOKED', recipient: null, status: 'PENDING', attempts: 0, lastError: null, updatedAt: expect.any(String) }]);
    // Another customer's address is removed after its mail was queued: nobody to write to.
    const vanishing = await createCustomer(f, { userName: 'Vanishing', email: `${unique('vanish')}@example.com` });
    const { reference: vanishingRef } = await addParticipation(f, appointmentReference, { customerReference: vanishing, state: 'BOOKED' });
    const cleared = await f.api.put(`${f.base}/customers/${encodeURIComponent(vanishing)}`, { email: null });
    expect(cleared.status, cleared.text).toBe(200);

    await ensureWorker();
    const [sent] = await waitForStatus(reference, 'SENT');
    expect(sent).toMatchObject({ template: 'PARTICIPATION_BOOKED', recipient: email, attempts: 1, lastError: null });
    expect(new Date(sent!.updatedAt).toISOString()).toBe(sent!.updatedAt);
    // SENT is recorded when the SMTP server accepted the mail; the sink may still be parsing it.
    await sink.waitFor(() => sink.to(email).length > 0, 5000, `the mail to ${email}`);
    expect(sink.to(email)).toHaveLength(1);
    const [skipped] = await waitForStatus(vanishingRef, 'SKIPPED');
    expect(skipped).toMatchObject({ template: 'PARTICIPATION_BOOKED', recipient: null, attempts: 1 });
    expect(skipped!.lastError).toContain('nobody to write to');
  });

  it('a transient refusal (451) is retried with back-off and the mail arrives once', async () => {
    await ensureWorker();
    const email = `${unique('retry')}@example.com`;
    let refusals = 0;
    sink.refuse((address) => (address === email && refusals++ < 2 ? { code: 451, message: 'Greylisted, try again later' } : null));
    const reference = await book(email);
    const [sent] = await waitForStatus(reference, 'SENT');
    expect(sent!.attempts).toBe(3);
    // SENT is recorded when the SMTP server accepted the mail; the sink may still be parsing it.
    await sink.waitFor(() => sink.to(email).length > 0, 5000, `the mail to ${email}`);
    expect(sink.to(email)).toHaveLength(1);
    sink.refuse(null);
  });

  it('a mail that keeps failing ends FAILED with the reason after its attempts', async () => {
    await ensureWorker();
    const email = `${unique('down')}@example.com`;
    sink.refuse((address) => (address === email ? { code: 451, message: 'Mailbox temporarily unavailable' } : null));
    const reference = await book(email);
    const [failed] = await waitForStatus(reference, 'FAILED');
    expect(failed!.attempts).toBe(3);
    expect(failed!.recipient).toBe(email);
    expect(failed!.lastError).toContain('451');
    expect(failed!.lastError).toContain('Mailbox temporarily unavailable');
    expect(sink.to(email)).toHaveLength(0);
    sink.refuse(null);
  });

  it('a permanent refusal (550) fails at once without further attempts', async () => {
    await ensureWorker();
    const email = `${unique('nobody')}@example.com`;
    sink.refuse((address) => (address === email ? { code: 550, message: 'No such user' } : null));
    const reference = await book(email);
    const [failed] = await waitForStatus(reference, 'FAILED');
    expect(failed!.attempts).toBe(1);
    expect(failed!.lastError).toContain('550');
    sink.refuse(null);
  });

  it('needs the CRM key, and another CRM’s participation is unknown (NOT_FOUND)', async () => {
    await ensureWorker();
    const email = `${unique('own')}@example.com`;
    const reference = await book(email);
    const other = await app.newCrm();
    const foreign = await other.api.graphql(QUERY, { p: f.providerRef, r: reference });
    expect(foreign.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const anonymous = await app.anonymous.graphql(QUERY, { p: f.providerRef, r: reference });
    expect(anonymous.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const unknown = await f.api.graphql(QUERY, { p: f.providerRef, r: 'nope@test' });
    expect(unknown.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
