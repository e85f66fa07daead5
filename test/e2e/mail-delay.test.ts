import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.js';
import { unique } from '../support/http.js';
import { addParticipation, createAppointment, createCustomer, setupScheduling, type SchedulingFixture } from '../support/scheduling-fixtures.js';
import { type SmtpSink, startSmtpSink } from '../support/smtp-sink.js';

const DELAY_MS = 1200;
const STATUS = `query ($p: String!, $r: String!) { mailDeliveries(providerReference: $p, participationReference: $r) { status } }`;

/**
 * MAIL_DELAY_MS: the relay queues a mail job to run that long after it
 * handed the outbox row over, so a burst of bookings is answered before its
 * mail is rendered. Real time: BullMQ's delayed jobs wait by Redis's clock.
 */
describe('mail delay (MAIL_DELAY_MS)', () => {
  let app: TestApp;
  let sink: SmtpSink;
  let f: SchedulingFixture;

  beforeAll(async () => {
    sink = await startSmtpSink();
    app = await startTestApp({ config: { smtpUrl: sink.url, mailDelayMs: DELAY_MS }, worker: { relayPollMs: 100 } });
    f = await setupScheduling(app);
  });
  afterAll(async () => {
    await app?.close();
    await sink?.close();
  });

  it('sends a booking mail no sooner than the delay after the booking answered, QUEUED meanwhile', async () => {
    const appointment = await createAppointment(f, { capacity: 5 });
    const email = `${unique('late')}@example.com`;
    const customerReference = await createCustomer(f, { userName: 'Lea Later', email });
    const { res, reference } = await addParticipation(f, appointment.reference, { customerReference, state: 'BOOKED' });
    expect(res.status).toBe(201);
    const answeredAt = performance.now();

    // Handed to the queue at once (the relay hears the commit), sent only after the delay.
    for (;;) {
      const status = await f.api.graphql<{ mailDeliveries: { status: string }[] }>(STATUS, { p: f.providerRef, r: reference });
      const statuses = status.body.data!.mailDeliveries.map((d) => d.status);
      if (statuses.includes('QUEUED')) break;
      expect(performance.now() - answeredAt).toBeLessThan(DELAY_MS);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(sink.to(email)).toHaveLength(0);

    const [mail] = await sink.waitForMail(email, 1, 15_000);
    const waited = performance.now() - answeredAt;
    expect(waited).toBeGreaterThanOrEqual(DELAY_MS - 50);
    expect(mail!.template).toBeTruthy();
  });
});
