import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_EPOCH, type TestApp } from '../support/harness.js';
import { isolatedDatabase } from '../support/isolated-database.js';
import { apiClient } from '../support/http.js';
import { bookSlot, expectNoIcs, icsOf, MAIL_ADDRESS, setupMailProvider } from '../support/mail-fixtures.js';
import { type SmtpSink, startSmtpSink } from '../support/smtp-sink.js';

/** "Montag, 1. März 2027" / "Monday, 1 March 2027" of an instant in a zone, built independently of the service. */
function dayText(iso: string, timeZone: string, language: 'de' | 'en'): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat(language === 'de' ? 'de-DE' : 'en-GB', { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone })
      .formatToParts(new Date(iso))
      .map((p) => [p.type, p.value]),
  );
  return language === 'de' ? `${parts.weekday}, ${parts.day}. ${parts.month} ${parts.year}` : `${parts.weekday}, ${parts.day} ${parts.month} ${parts.year}`;
}

const compact = (iso: string, timeZone: string): string => {
  const p = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZone })
      .formatToParts(new Date(iso))
      .map((x) => [x.type, x.value]),
  );
  return `${p.year}${p.month}${p.day}T${p.hour}${p.minute}${p.second}`;
};

describe('e-mails of the public booking flow', () => {
  let app: TestApp;
  let sink: SmtpSink;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  beforeAll(async () => {
    sink = await startSmtpSink();
    db = await isolatedDatabase('mail_flow');
    app = await startTestApp({ clockAt: TEST_EPOCH, config: { smtpUrl: sink.url, databaseUrl: db.url }, worker: { relayPollMs: 200 } });
  });
  afterAll(async () => {
    await app?.close();
    await sink?.close();
    await db?.drop();
  });

  it('IMMEDIATE: the consumer gets a confirmation (locale en) with cancel link and an .ics REQUEST, the provider a notification in its language', async () => {
    const zone = 'America/New_York';
    const f = await setupMailProvider(app, { timeZone: zone, language: 'de' });
    const { email, created, participationId } = await bookSlot(app, f, 0, { locale: 'en', message: 'Bitte klingeln\n2. Stock' });
    const [confirmation] = await sink.waitForMail(email);
    const [notification] = await sink.waitForMail(f.providerEmail!);

    // Consumer: English (locale), time in the provider's zone, resource name, address, message, cancel link.
    expect(confirmation!.template).toBe('booking-confirmation');
    expect(confirmation!.to).toEqual([email.toLowerCase()]);
    expect(confirmation!.subject).toContain('Booking confirmed');
    expect(confirmation!.subject).toContain(f.resourceName);
    expect(confirmation!.text).toContain('Hello Clara Consumer,');
    expect(confirmation!.text).toContain(`${dayText(f.slots[0]!.from, zone, 'en')}, 09:00 – 09:30 (${zone})`);
    expect(confirmation!.text).toContain(f.resourceName);
    expect(confirmation!.text).toContain('Wohnungsbesichtigung');
    expect(confirmation!.text).toContain(`${MAIL_ADDRESS.street} ${MAIL_ADDRESS.number}, ${MAIL_ADDRESS.zip} ${MAIL_ADDRESS.city}`);
    expect(confirmation!.text).toContain('> Bitte klingeln\n> 2. Stock');
    expect(confirmation!.text).toContain(created.cancelLink);
    expect(confirmation!.html).toContain(`href="${created.cancelLink}"`);
    expect(confirmation!.html).toContain('Bitte klingeln<br>');
    expect(confirmation!.messageId).toMatch(/^<mail-\d+@booking\.localhost>$/);

    const ics = icsOf(confirmation!);
    expect(ics.contentType).toContain('method=REQUEST');
    expect(ics.calendar.METHOD).toBe('REQUEST');
    expect(ics.vtimezones).toEqual([zone]);
    expect(ics.raw).toContain('BEGIN:VTIMEZONE');
    expect(ics.event.UID).toBe(`:participation-${participationId}@localhost`);
    expect(ics.event.SEQUENCE).toBe(':0');
    expect(ics.event.STATUS).toBe(':CONFIRMED');
    expect(ics.event.DTSTART).toBe(`;TZID=${zone}:${compact(f.slots[0]!.from, zone)}`);
    expect(ics.event.DTSTART).toContain('T090000');
    expect(ics.event.DTEND).toBe(`;TZID=${zone}:${compact(f.slots[0]!.to, zone)}`);
    expect(ics.event.DTSTAMP).toMatch(/^:\d{8}T\d{6}Z$/);
    expect(ics.event.ORGANIZER).toContain(`mailto:${f.providerEmail}`);
    expect(ics.event.ATTENDEE!.toLowerCase()).toContain(`mailto:${email.toLowerCase()}`);

    // Provider: German (its language), customer data and the consumer's message, no cancel link, no .ics.
    expect(notification!.template).toBe('provider-booking-notification');
    expect(notification!.subject).toContain('Neue Buchung: Clara Consumer');
    expect(notification!.text).toContain(`Guten Tag ${f.providerName},`);
    expect(notification!.text).toContain(email);
    expect(notification!.text).toContain(`${dayText(f.slots[0]!.from, zone, 'de')}, 09:00 – 09:30 Uhr (${zone})`);
    expect(notification!.text).toContain('Nachricht des Kunden:');
    expect(notification!.text).toContain('> Bitte klingeln');
    expect(notification!.text).not.toContain('/cancel/');
    expectNoIcs(notification!);
  });

  it('REQUESTED: the consumer (no locale: the language its account got from the CRM, de) gets request-received with the link, the provider (en, owner e-mail) the request', async () => {
    const f = await setupMailProvider(app, { language: 'en', providerEmail: null, bookingProcess: 'REQUESTED' });
    const { email, created } = await bookSlot(app, f, 1, { message: 'Is parking available?' });
    const [received] = await sink.waitForMail(email);
    const [request] = await sink.waitForMail(f.ownerEmail);

    expect(received!.template).toBe('booking-request-received');
    expect(received!.subject).toContain('Ihre Terminanfrage');
    expect(received!.text).toContain('bestätigt den Termin noch');
    expect(received!.text).toContain(`${dayText(f.slots[1]!.from, 'Europe/Berlin', 'de')}, 09:30 – 10:00 Uhr (Europe/Berlin)`);
    expect(received!.text).toContain('Anfrage zurückziehen:');
    expect(received!.text).toContain(created.cancelLink);
    expect(received!.text).toContain('> Is parking available?');
    expectNoIcs(received!);

    expect(request!.template).toBe('provider-booking-request');
    expect(request!.to).toEqual([f.ownerEmail.toLowerCase()]);
    expect(request!.subject).toContain('New appointment request: Clara Consumer');
    expect(request!.text).toContain(`${dayText(f.slots[1]!.from, 'Europe/Berlin', 'en')}, 09:30 – 10:00 (Europe/Berlin)`);
    expect(request!.text).toContain('Please confirm or decline the request.');
    expect(request!.text).toContain('> Is parking available?');
  });

  it('the cancel link: the consumer gets a cancellation (locale de) with .ics CANCEL of the same UID, the provider a notice', async () => {
    const f = await setupMailProvider(app, { language: 'en' });
    const { email, created, participationId } = await bookSlot(app, f, 2, { locale: 'de' });
    const [confirmation] = await sink.waitForMail(email);
    expect(confirmation!.subject).toContain('Buchungsbestätigung');
    const request = icsOf(confirmation!);

    const path = new URL(created.cancelLink).pathname;
    const cancelled = await apiClient(app.baseUrl).post(path);
    expect(cancelled.status).toBe(200);
    const mails = await sink.waitForMail(email, 2);
    const cancellation = mails.find((m) => m.template === 'participation-canceled')!;
    expect(cancellation.subject).toContain('Termin storniert');
    expect(cancellation.text).toContain('Guten Tag Clara Consumer,');
    expect(cancellation.text).toContain(f.resourceName);
    expect(cancellation.text).not.toContain('/cancel/');
    const ics = icsOf(cancellation);
    expect(ics.calendar.METHOD).toBe('CANCEL');
    expect(ics.contentType).toContain('method=CANCEL');
    expect(ics.event.UID).toBe(request.event.UID);
    expect(ics.event.UID).toBe(`:participation-${participationId}@localhost`);
    expect(Number(ics.event.SEQUENCE!.slice(1))).toBeGreaterThan(Number(request.event.SEQUENCE!.slice(1)));
    expect(ics.event.STATUS).toBe(':CANCELLED');
    expect(ics.event.DTSTART).toBe(request.event.DTSTART);
    expect(ics.vtimezones).toEqual(['Europe/Berlin']);

    const providerMails = await sink.waitForMail(f.providerEmail!, 2);
    const notice = providerMails.find((m) => m.template === 'provider-booking-cancelled')!;
    expect(notice.subject).toContain('Booking cancelled: Clara Consumer');
    expect(notice.text).toContain('has cancelled their place');
    expectNoIcs(notice);
  });
});
