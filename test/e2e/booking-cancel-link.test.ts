import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setupBookable } from '../support/booking-fixtures.js';
import { book, bookablesOf, mailTemplatesOf, participationsOf, setChannel, upcoming } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import type { ApiClient } from '../support/http.js';

/** The path of a cancel link (the link carries PUBLIC_BASE_URL, the test gateway listens elsewhere). */
const pathOf = (link: string) => new URL(link).pathname;

describe('booking flow: cancel link', () => {
  let app: TestApp;
  let pub: ApiClient;

  beforeAll(async () => {
    app = await startTestApp();
    pub = app.anonymous;
  });
  afterEach(() => app.clock.reset());
  afterAll(async () => app?.close());

  async function twoBookings() {
    const f = await setupBookable(app, { capacity: 3 });
    const first = await book(pub, f, { locale: 'en' });
    const second = await book(pub, f);
    expect([first.status, second.status]).toEqual([201, 201]);
    const appointmentUuid = first.body.createdAppointment.appointment_uuid;
    const [mine, other] = await participationsOf(app, appointmentUuid);
    return { f, link: first.body.createdAppointment.cancelLink as string, appointmentUuid, mine: mine!, other: other! };
  }

  it('GET shows a confirmation page and cancels nothing', async () => {
    const { link, mine, appointmentUuid } = await twoBookings();
    const page = await pub.get(pathOf(link));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('Do you want to cancel this appointment?');
    expect(page.text).toContain('<form method="post">');
    expect(page.text).toContain('Agent');
    expect((await participationsOf(app, appointmentUuid)).find((p) => p.id === mine.id)!.state).toBe('BOOKED');
  });

  it('POST cancels only that participation, with the usual mails, and frees its place', async () => {
    const { f, link, mine, other, appointmentUuid } = await twoBookings();
    expect(bookablesOf((await upcoming(pub, f.resourceUuid)).body)[0].capacity_left).toBe(1);
    const done = await pub.post(pathOf(link));
    expect(done.status).toBe(200);
    expect(done.text).toContain('Your appointment has been cancelled.');
    const rows = await participationsOf(app, appointmentUuid);
    expect(rows.find((p) => p.id === mine.id)!.state).toBe('CANCELED');
    expect(rows.find((p) => p.id === other.id)!.state).toBe('BOOKED');
    expect(await mailTemplatesOf(app, mine.id)).toEqual([
      'booking-confirmation',
      'provider-booking-notification',
      'participation-canceled',
      'provider-booking-cancelled',
    ]);
    expect(await mailTemplatesOf(app, other.id)).toEqual(['booking-confirmation', 'provider-booking-notification']);
    expect(bookablesOf((await upcoming(pub, f.resourceUuid)).body)[0].capacity_left).toBe(2);

    // Opening or confirming again changes nothing and sends nothing.
    const again = await pub.post(pathOf(link));
    expect(again.status).toBe(200);
    expect(again.text).toContain('Your appointment has been cancelled.');
    expect(await mailTemplatesOf(app, mine.id)).toHaveLength(4);
    expect((await pub.get(pathOf(link))).text).not.toContain('<form');
  });

  it('speaks German unless the booking asked for English', async () => {
    const f = await setupBookable(app);
    const res = await book(pub, f);
    const page = await pub.get(pathOf(res.body.createdAppointment.cancelLink));
    expect(page.text).toContain('Möchten Sie diesen Termin absagen?');
    expect(page.text).toMatch(/um 09:00 Uhr/);
    // The page may not be framed (clickjacking of its button), sniffed, or pass its token on as a referrer.
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('a request not yet confirmed is withdrawn: the page says so', async () => {
    const f = await setupBookable(app);
    expect((await setChannel(f, 'RESOURCE_PUBLIC', { bookingProcess: 'REQUESTED' })).status).toBeLessThan(300);
    const res = await book(pub, f, { locale: 'en' });
    expect(res.status).toBe(201);
    const page = await pub.get(pathOf(res.body.createdAppointment.cancelLink));
    expect(page.text).toContain('<title>Withdraw request</title>');
    expect(page.text).toContain('Do you want to withdraw your request for this appointment?');
    expect(page.text).toContain('<button type="submit">Withdraw request</button>');
  });

  it('refuses a tampered link with 403', async () => {
    const { link, mine, appointmentUuid } = await twoBookings();
    const token = pathOf(link).split('/').pop()!;
    const flipped = token.slice(0, 10) + (token[10] === 'A' ? 'B' : 'A') + token.slice(11);
    for (const bad of [flipped, token.slice(0, -1), `${token}A`, 'x']) {
      const get = await pub.get(`/cancel/${bad}`);
      const post = await pub.post(`/cancel/${bad}`);
      expect([get.status, post.status], bad).toEqual([403, 403]);
      expect(post.text).toContain('invalid or has expired');
    }
    expect((await participationsOf(app, appointmentUuid)).find((p) => p.id === mine.id)!.state).toBe('BOOKED');
  });

  it('refuses an expired link (the appointment has started) with 403', async () => {
    const { link, mine, appointmentUuid, f } = await twoBookings();
    app.clock.set(new Date(new Date(f.slot.from).getTime() - 1000));
    expect((await pub.get(pathOf(link))).status).toBe(200);
    app.clock.set(f.slot.from);
    expect((await pub.get(pathOf(link))).status).toBe(403);
    expect((await pub.post(pathOf(link))).status).toBe(403);
    expect((await participationsOf(app, appointmentUuid)).find((p) => p.id === mine.id)!.state).toBe('BOOKED');
  });
});
