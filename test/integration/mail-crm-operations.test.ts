import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_EPOCH, type TestApp } from '../support/harness.js';
import { isolatedDatabase } from '../support/isolated-database.js';
import { unique } from '../support/http.js';
import { bookSlot, expectNoIcs, icsOf, setupMailProvider } from '../support/mail-fixtures.js';
import { enc } from '../support/offerings-fixtures.js';
import { addParticipation, createAppointment, createCustomer, setupScheduling, sql } from '../support/scheduling-fixtures.js';
import { type SmtpSink, startSmtpSink } from '../support/smtp-sink.js';

/** Waits until the worker has settled every mail row of the outbox (so "no mail" can be asserted). */
async function settled(app: TestApp): Promise<void> {
  const until = Date.now() + 15_000;
  for (;;) {
    const [row] = await sql<{ open: string }>(
      app,
      `select count(*) as open from outbox_message o left join mail_delivery d on d.id = o.id
        where o.kind = 'mail' and (o.dispatched_at is null or d.status is null or d.status not in ('SENT', 'SKIPPED', 'FAILED'))`,
    );
    if (Number(row!.open) === 0) return;
    if (Date.now() > until) throw new Error(`${row!.open} mails still open`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('e-mails of CRM operations', () => {
  let app: TestApp;
  let sink: SmtpSink;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  beforeAll(async () => {
    sink = await startSmtpSink();
    db = await isolatedDatabase('mail_crm');
    app = await startTestApp({ clockAt: TEST_EPOCH, config: { smtpUrl: sink.url, databaseUrl: db.url }, worker: { relayPollMs: 200 } });
  });
  afterAll(async () => {
    await app?.close();
    await sink?.close();
    await db?.drop();
  });

  it('REQUESTED -> BOOKED: request-received, then participation-booked (customer language en) with the CRM message and .ics, no cancel link', async () => {
    const f = await setupScheduling(app, { timeZone: 'Europe/London' });
    const appointment = await createAppointment(f, { start: '2027-07-05T14:00', end: '2027-07-05T15:00' });
    const email = `${unique('eve')}@example.com`;
    const customerReference = await createCustomer(f, { userName: 'Eve English', email, language: 'en' });
    const { res, reference } = await addParticipation(f, appointment.reference, { customerReference, state: 'REQUESTED' });
    expect(res.status).toBe(201);
    const [received] = await sink.waitForMail(email);
    expect(received!.template).toBe('booking-request-received');
    expect(received!.subject).toContain('Your appointment request');
    expect(received!.text).toContain('Monday, 5 July 2027, 14:00 – 15:00 (Europe/London)');
    // A customer the CRM added cancels through the CRM: no withdraw link (it would outlive the confirmation).
    expect(received!.text).not.toContain('/cancel/');

    const booked = await f.api.post(`${f.base}/participations/${enc(reference)}`, { state: 'BOOKED', message: 'See you at the gate.' });
    expect(booked.status).toBe(200);
    const mails = await sink.waitForMail(email, 2);
    const confirmation = mails.find((m) => m.template === 'participation-booked')!;
    expect(confirmation.subject).toBe(`Appointment confirmed: Agent, 5 Jul 2027, 14:00`);
    expect(confirmation.text).toContain('Hello Eve English,');
    expect(confirmation.text).toContain('Monday, 5 July 2027, 14:00 – 15:00 (Europe/London)');
    expect(confirmation.text).toContain('Invalidenstraße 1, 10115 Berlin');
    expect(confirmation.text).toMatch(/Message from Provider [^:]+:\n> See you at the gate\./);
    expect(confirmation.text).not.toContain('/cancel/');
    const ics = icsOf(confirmation);
    expect(ics.calendar.METHOD).toBe('REQUEST');
    expect(ics.event.DTSTART).toBe(';TZID=Europe/London:20270705T140000');
    expect(ics.vtimezones).toEqual(['Europe/London']);
    expect(ics.event.LOCATION).toContain('Invalidenstraße 1');
  });

  it('BOOKED -> CANCELED by the CRM: participation-canceled (customer without language: provider de) with message and .ics CANCEL; sendMails=false sends nothing', async () => {
    const f = await setupScheduling(app);
    const appointment = await createAppointment(f, { start: '2027-03-01T10:00', end: '2027-03-01T11:00' });
    const email = `${unique('dora')}@example.com`;
    const customerReference = await createCustomer(f, { userName: 'Dora Deutsch', email });
    const { reference } = await addParticipation(f, appointment.reference, { customerReference, state: 'BOOKED' });
    const [booked] = await sink.waitForMail(email);
    expect(booked!.template).toBe('participation-booked');
    expect(booked!.subject).toBe('Termin bestätigt: Agent, 01.03.2027, 10:00 Uhr');
    const request = icsOf(booked!);

    expect((await f.api.post(`${f.base}/participations/${enc(reference)}`, { state: 'CANCELED', message: 'Leider krank.' })).status).toBe(200);
    const mails = await sink.waitForMail(email, 2);
    const canceled = mails.find((m) => m.template === 'participation-canceled')!;
    expect(canceled.subject).toBe('Termin storniert: Agent, 01.03.2027, 10:00 Uhr');
    expect(canceled.text).toContain('Guten Tag Dora Deutsch,');
    expect(canceled.text).toContain('Montag, 1. März 2027, 10:00 – 11:00 Uhr (Europe/Berlin)');
    expect(canceled.text).toContain('> Leider krank.');
    const ics = icsOf(canceled);
    expect(ics.calendar.METHOD).toBe('CANCEL');
    expect(ics.event.UID).toBe(request.event.UID);
    expect(ics.event.SEQUENCE).toBe(':1');

    // sendMails=false: the state changes, nobody is written to.
    const quiet = `${unique('quiet')}@example.com`;
    const quietCustomer = await createCustomer(f, { userName: 'Quiet', email: quiet });
    const { reference: quietRef } = await addParticipation(f, appointment.reference, { customerReference: quietCustomer, state: 'BOOKED', query: 'sendMails=false' });
    expect((await f.api.post(`${f.base}/participations/${enc(quietRef)}?sendMails=false`, { state: 'CANCELED' })).status).toBe(200);
    await settled(app);
    expect(sink.to(quiet)).toHaveLength(0);
  });

  it('cancel appointment: every booked or requested participant gets appointment-cancelled with the message in its language; holds and customers without e-mail get nothing', async () => {
    const f = await setupScheduling(app);
    const appointment = await createAppointment(f, { start: '2027-04-01T10:00', end: '2027-04-01T11:00' });
    const de = `${unique('de')}@example.com`;
    const en = `${unique('en')}@example.com`;
    await addParticipation(f, appointment.reference, { customerReference: await createCustomer(f, { userName: 'De Kunde', email: de }), state: 'BOOKED' });
    await addParticipation(f, appointment.reference, { customerReference: await createCustomer(f, { userName: 'En Customer', email: en, language: 'en' }), state: 'REQUESTED' });
    const noMail = await createCustomer(f, { userName: 'No Mail', email: null });
    const { reference: noMailRef } = await addParticipation(f, appointment.reference, { customerReference: noMail, state: 'BOOKED' });
    await sink.waitForMail(de);
    await sink.waitForMail(en);

    const message = 'Wegen Sturm abgesagt / cancelled due to the storm';
    const res = await f.api.delete(`${f.base}/appointments?message=${encodeURIComponent(message)}`, { appointmentReference: appointment.reference });
    expect(res.status).toBe(200);
    const [deMail] = (await sink.waitForMail(de, 2)).filter((m) => m.template === 'appointment-cancelled');
    const [enMail] = (await sink.waitForMail(en, 2)).filter((m) => m.template === 'appointment-cancelled');
    expect(deMail!.subject).toBe('Termin abgesagt: Agent, 01.04.2027, 10:00 Uhr');
    expect(deMail!.text).toContain('hat diesen Termin abgesagt');
    expect(deMail!.text).toContain(`> ${message}`);
    expect(deMail!.text).toContain('Donnerstag, 1. April 2027, 10:00 – 11:00 Uhr (Europe/Berlin)');
    expect(icsOf(deMail!).calendar.METHOD).toBe('CANCEL');
    expect(enMail!.subject).toBe('Appointment cancelled: Agent, 1 Apr 2027, 10:00');
    expect(enMail!.text).toContain('has cancelled this appointment');
    expect(enMail!.text).toContain(`> ${message}`);
    expect(icsOf(enMail!).event.STATUS).toBe(':CANCELLED');

    await settled(app);
    // The participant without e-mail: no mail is queued for it at all (neither booked nor cancelled), so none is sent.
    const rows = await sql<{ template: string; status: string; recipient: string | null }>(
      app,
      `select d.template, d.status, d.recipient from mail_delivery d join participation p on p.id = d.participation_id where p.reference = ? and p.crm_id = ? order by d.id`,
      [noMailRef, f.crmId],
    );
    expect(rows).toEqual([]);
    // … while the same query finds the mails of a participant with an address (the query itself works).
    const withMail = await sql<{ template: string }>(
      app,
      `select d.template from mail_delivery d join participation p on p.id = d.participation_id join customer c on c.id = p.customer_id where c.email = ? and p.crm_id = ? order by d.id`,
      [de, f.crmId],
    );
    expect(withMail.map((row) => row.template)).toEqual(['participation-booked', 'appointment-cancelled']);
  });

  it('deleting a customer with future appointments: a farewell participation-canceled to the erased customer, recorded without its address', async () => {
    const f = await setupScheduling(app);
    const appointment = await createAppointment(f, { start: '2027-05-03T09:00', end: '2027-05-03T10:00' });
    const email = `${unique('gone')}@example.com`;
    const customerReference = await createCustomer(f, { userName: 'Gina Gone', email, language: 'en' });
    const { reference } = await addParticipation(f, appointment.reference, { customerReference, state: 'BOOKED' });
    await sink.waitForMail(email);
    expect((await f.api.delete(`${f.base}/customers/${enc(customerReference)}?ignoreFutureAppointments=true`)).status).toBe(204);
    const mails = await sink.waitForMail(email, 2);
    const farewell = mails.find((m) => m.template === 'participation-canceled')!;
    expect(farewell.text).toContain('Hello Gina Gone,');
    expect(farewell.subject).toContain('Appointment cancelled');
    expect(icsOf(farewell).calendar.METHOD).toBe('CANCEL');
    await settled(app);
    const records = await sql<{ template: string; recipient: string; status: string }>(
      app,
      `select d.template, d.recipient, d.status from mail_delivery d join participation p on p.id = d.participation_id where p.crm_id = ? and p.reference = ? order by d.id`,
      [f.crmId, reference],
    );
    expect(records.map((r) => [r.template, r.status])).toEqual([
      ['participation-booked', 'SENT'],
      ['participation-canceled', 'SENT'],
    ]);
    expect(records.every((r) => r.recipient === 'erased')).toBe(true);
    // The outbox rows of both mails (mail_delivery is keyed by them) no longer carry the address either.
    const outbox = await sql<{ payload: Record<string, unknown> }>(
      app,
      `select o.payload from outbox_message o join mail_delivery d on d.id = o.id join participation p on p.id = d.participation_id where p.crm_id = ? and p.reference = ?`,
      [f.crmId, reference],
    );
    expect(outbox).toHaveLength(2);
    expect(JSON.stringify(outbox)).not.toContain(email);
    expect(JSON.stringify(outbox).toLowerCase()).not.toContain(email.split('@')[0]!.toLowerCase());
  });

  it('deleting a resource with future appointments: appointment-cancelled to its participants', async () => {
    const f = await setupScheduling(app);
    const appointment = await createAppointment(f, { start: '2027-06-01T10:00', end: '2027-06-01T11:00' });
    const email = `${unique('res')}@example.com`;
    await addParticipation(f, appointment.reference, { customerReference: await createCustomer(f, { userName: 'Rita', email }), state: 'BOOKED' });
    await sink.waitForMail(email);
    expect((await f.api.delete(`${f.base}/resources/${enc(f.resourceRef)}?ignoreFutureAppointments=true`)).status).toBe(204);
    const mails = await sink.waitForMail(email, 2);
    const cancelled = mails.find((m) => m.template === 'appointment-cancelled')!;
    expect(cancelled.subject).toBe('Termin abgesagt: Agent, 01.06.2027, 10:00 Uhr');
    expect(cancelled.text).not.toContain('Nachricht von');
    expect(icsOf(cancelled).calendar.METHOD).toBe('CANCEL');
  });

  it('a user found by e-mail gets the verification mail in its language (en from the booking locale)', async () => {
    const f = await setupMailProvider(app);
    const { email } = await bookSlot(app, f, 0, { locale: 'en' });
    await sink.waitForMail(email);
    const res = await f.api.post(`/crms/${f.crmId}/user`, { reference: `${unique('linked')}@test`, email, username: unique('linked'), lastName: 'Consumer' });
    expect([200, 201]).toContain(res.status);
    const mails = await sink.waitForMail(email, 2);
    const verification = mails.find((m) => m.template === 'user-verification')!;
    expect(verification.subject).toBe('Please confirm your e-mail address');
    expect(verification.text).toContain('Hello Clara Consumer,');
    expect(verification.text).toMatch(/http:\/\/localhost:4000\/verify-email\?token=\S+/);
    expect(verification.html).toContain('href="http://localhost:4000/verify-email?token=');
    expectNoIcs(verification);
  });
});
