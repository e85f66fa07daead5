import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.js';
import { isolatedDatabase } from '../support/isolated-database.js';
import { apiClient, unique } from '../support/http.js';
import { bookingPageUrl, DE_LABELS, EN_LABELS, fillConsumerForm, openFirstFreeWeek, slotButton } from '../support/booking-page.js';
import { contentWidth, DESKTOP, launchBrowser, newVisitor, PHONE, saveArtifact, saveScreenshot, seriousAxeViolations } from '../support/browser.js';
import { MAIL_ADDRESS, setupMailProvider } from '../support/mail-fixtures.js';
import { createProduct, createResource, enc } from '../support/offerings-fixtures.js';
import { type SmtpSink, startSmtpSink } from '../support/smtp-sink.js';

describe('booking page /book/:ref and widget /embed.js in Chromium', () => {
  let app: TestApp;
  let sink: SmtpSink;
  let browser: Browser;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  beforeAll(async () => {
    sink = await startSmtpSink();
    db = await isolatedDatabase('page');
    [app, browser] = await Promise.all([startTestApp({ config: { smtpUrl: sink.url, databaseUrl: db.url }, worker: { relayPollMs: 200 } }), launchBrowser()]);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await sink?.close();
    await db?.drop();
  });

  it('answers a friendly 404 page for an unknown resource, a 400 page for a bad parameter, and sends the security headers', async () => {
    const client = apiClient(app.baseUrl);
    const unknown = await client.get('/book/nobody@nowhere', { 'Accept-Language': 'en' });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toContain('text/html');
    expect(unknown.text).toContain('This booking page does not exist');
    const german = await client.get('/book/nobody@nowhere', { 'Accept-Language': 'de-DE,de;q=0.9' });
    expect(german.text).toContain('Diese Buchungsseite gibt es nicht');
    expect((await client.get('/book/nobody@nowhere?lang=en', { 'Accept-Language': 'de' })).text).toContain('This booking page does not exist');

    // Odd paths and parameters are 4xx, never 500.
    for (const path of ['/book/%E0%A4%A', `/book/${'x'.repeat(2000)}`, '/book/..%2F..%2Fetc', '/book/%00', '/book/a@b@c@d', '/book/x?ref[]=1', '/book/x?lang[a]=b', '/book/x?embed=1&week=1']) {
      const answer = await client.get(path);
      expect(answer.status, path).toBeGreaterThanOrEqual(400);
      expect(answer.status, path).toBeLessThan(500);
    }

    const f = await setupMailProvider(app);
    const badLang = await client.get(`/book/${encodeURIComponent(f.resourceRef)}?lang=fr`);
    expect(badLang.status).toBe(400);
    expect(badLang.text).toContain('lang must be de or en');
    const badWeek = await client.get(`/book/${encodeURIComponent(f.resourceRef)}?week=2027-02-30&lang=en`);
    expect(badWeek.status).toBe(400);
    expect(badWeek.text).toContain('week must be a day as yyyy-MM-dd');
    const tooMany = await client.get(`/book/${encodeURIComponent(f.resourceRef)}?lang=en&${Array.from({ length: 21 }, (_, i) => `ref=r${i}@x`).join('&')}`);
    expect(tooMany.status).toBe(400);
    expect(tooMany.text).toContain('ref: at most 20 further resources');
    const badChannel = await client.get(`/book/${encodeURIComponent(f.resourceRef)}?channelKey=NOPE&lang=en`);
    expect(badChannel.status).toBe(400);
    expect(badChannel.text).toContain('channelKey must be one of');

    const page = await client.get(`/book/${encodeURIComponent(f.resourceRef)}`);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    // No inline script may run: the configuration is a JSON data block.
    expect(page.text).not.toMatch(/<script(?![^>]*(src=|type="application\/json"))/);

    const framed = await client.get(`/book/${encodeURIComponent(f.resourceRef)}?embed=1`);
    expect(framed.headers.get('content-security-policy')).toContain('frame-ancestors *');
    expect(framed.headers.get('x-frame-options')).toBeNull();

    const embed = await client.get('/embed.js', { 'Accept-Encoding': 'gzip' });
    expect(embed.status).toBe(200);
    expect(embed.headers.get('content-type')).toContain('text/javascript');
    expect(embed.headers.get('x-content-type-options')).toBe('nosniff');
    expect(embed.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    const script = /src="(\/assets\/booking\/[^/]+\/booking\.js)"/.exec(page.text)![1]!;
    const asset = await client.get(script);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect((await client.get('/assets/booking/x/nothing.js')).status).toBe(404);
  });

  it('books a slot end to end in English in the provider’s zone (browser elsewhere), shows the confirmation, and the e-mail arrives', async () => {
    const zone = 'America/New_York';
    const f = await setupMailProvider(app, { timeZone: zone, language: 'de', capacity: 3 });
    const context = await newVisitor(browser, { ...DESKTOP, locale: 'de-DE', timezoneId: 'Asia/Tokyo' });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('response', (response) => void (response.status() >= 400 && !response.url().endsWith('/favicon.ico') && errors.push(`${response.status()} ${response.url()}`)));
    // What the first visit transfers: the page and its files (script, modules, graphql-ws, CSS).
    const transfers: Promise<{ url: string; bytes: number }>[] = [];
    page.on('response', (response) => {
      const path = new URL(response.url()).pathname;
      if (path.startsWith('/book/') || path.startsWith('/assets/booking/')) {
        transfers.push(response.finished().then(async () => {
          const sizes = await response.request().sizes();
          return { url: path, bytes: sizes.responseHeadersSize + sizes.responseBodySize };
        }));
      }
    });
    try {
      await openFirstFreeWeek(page, bookingPageUrl(app.baseUrl, f.resourceRef, 'lang=en'));
      const files = await Promise.all(transfers);
      const total = files.reduce((sum, file) => sum + file.bytes, 0);
      await saveArtifact('booking-page-transfer.json', JSON.stringify({ total, files }, null, 2));
      // A budget, so the page stays small: 10 files, gzip (Chromium sends no br over plain http).
      expect(files.length).toBe(10);
      expect(total).toBeLessThan(40_000);
      await expect.poll(() => page.locator('html').getAttribute('lang')).toBe('en');
      await page.getByText(`All times in the time zone ${zone}.`).waitFor();
      // 09:00 in New York, although the browser is in Tokyo; 3 places, as the timeslot says.
      const slot = slotButton(page, '09:00');
      await slot.waitFor();
      await expect.poll(() => slot.textContent()).toContain('3 places left');
      // The slots are next week or later: the page skipped the empty weeks and says so; the week buttons lead back and forth.
      await page.getByText('This week has no free times; showing the first week that has.').waitFor();
      expect(await seriousAxeViolations(page)).toEqual([]);
      const shownWeek = await page.locator('#week-title').textContent();
      const previous = page.getByRole('button', { name: /Previous week/ });
      while (!(await previous.isDisabled())) {
        const before = await page.locator('#week-title').textContent();
        await previous.click();
        await expect.poll(() => page.locator('#week-title').textContent()).not.toBe(before);
        await page.locator('.list-status').getByText('There are no free times this week.', { exact: false }).waitFor();
      }
      while ((await page.locator('#week-title').textContent()) !== shownWeek) {
        const before = await page.locator('#week-title').textContent();
        await page.getByRole('button', { name: /Next week/ }).click();
        await expect.poll(() => page.locator('#week-title').textContent()).not.toBe(before);
      }
      await slot.waitFor();

      await slot.click();
      await page.getByRole('heading', { name: 'Your appointment' }).waitFor();
      await expect.poll(() => page.locator('#hold').textContent()).toMatch(/^Reserved for you: [23]:\d\d minutes left\.$/);
      // The page checks the form before the server does.
      await page.getByRole('button', { name: 'Book now' }).click();
      await page.getByText('Please enter your first name.').waitFor();
      expect(await page.getByLabel(EN_LABELS.firstname).getAttribute('aria-invalid')).toBe('true');
      expect(await seriousAxeViolations(page)).toEqual([]);

      const email = `${unique('page')}@example.com`;
      await fillConsumerForm(page, { firstname: 'Paula', lastname: 'Page', email, mobile: '+49 170 1234567', message: 'Ring twice, please.' }, EN_LABELS);
      await page.getByRole('button', { name: 'Book now' }).click();
      await page.getByRole('heading', { name: 'Your appointment is booked' }).waitFor();
      const details = await page.locator('.details').innerText();
      expect(details).toMatch(/09:00–09:30 \(America\/New_York\)/);
      expect(details).toContain(f.resourceName);
      expect(details).toContain('Wohnungsbesichtigung');
      expect(details).toContain(`${MAIL_ADDRESS.street} ${MAIL_ADDRESS.number}, ${MAIL_ADDRESS.zip} ${MAIL_ADDRESS.city}`);
      expect(await seriousAxeViolations(page)).toEqual([]);
      await saveScreenshot(page, 'booking-page-desktop-confirmation');

      const cancelLink = await page.getByRole('link', { name: 'Cancel appointment' }).getAttribute('href');
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Add to calendar (.ics)' }).click()]);
      const ics = await new Promise<string>((resolve, reject) => {
        download.createReadStream().then((stream) => {
          let text = '';
          stream.on('data', (chunk) => (text += chunk));
          stream.on('end', () => resolve(text));
          stream.on('error', reject);
        }, reject);
      });
      expect(ics).toContain('BEGIN:VEVENT');
      expect(ics).toContain(`DTSTART:${f.slots[0]!.from.replace(/[-:]/g, '').replace('.000', '')}`);

      const [mail] = await sink.waitForMail(email);
      expect(mail!.template).toBe('booking-confirmation');
      expect(mail!.subject).toContain('Booking confirmed');
      expect(mail!.text).toContain(cancelLink!);
      // The page's .ics has the UID of the mail's invitation, so a calendar keeps one event.
      const uid = /UID:(\S+)/.exec(mail!.attachments.find((a) => a.filename.endsWith('.ics'))!.content.replace(/\r\n /g, ''))![1];
      expect(ics.replace(/\r\n /g, '')).toContain(`UID:${uid}`);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('speaks German by Accept-Language, says "Anfrage gesendet" on a REQUESTED channel, and fits a 320 px phone', async () => {
    const f = await setupMailProvider(app, { bookingProcess: 'REQUESTED', capacity: 1, language: 'en' });
    const context = await newVisitor(browser, { ...PHONE, locale: 'de-DE', timezoneId: 'UTC' });
    const page = await context.newPage();
    try {
      // `week` opens the week of a day straight away.
      await page.goto(bookingPageUrl(app.baseUrl, f.resourceRef, `week=${f.day}`));
      await expect.poll(() => page.locator('html').getAttribute('lang')).toBe('de');
      const slot = slotButton(page, '09:30');
      await slot.waitFor();
      // A single place: no "places left" noise.
      expect(await slot.textContent()).not.toContain('Platz');
      // Nothing is wider than the phone.
      expect(await contentWidth(page)).toBeLessThanOrEqual(320);
      await saveScreenshot(page, 'booking-page-phone-list');
      expect(await seriousAxeViolations(page)).toEqual([]);

      await slot.click();
      await page.getByRole('heading', { name: 'Ihr Termin' }).waitFor();
      const email = `${unique('anfrage')}@example.com`;
      await fillConsumerForm(page, { firstname: 'Petra', lastname: 'Probe', email }, DE_LABELS);
      expect(await contentWidth(page)).toBeLessThanOrEqual(320);
      await saveScreenshot(page, 'booking-page-phone-form');
      // Keyboard only: the submit button is reachable and works with Enter.
      await page.getByRole('button', { name: 'Anfrage senden' }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Ihre Anfrage wurde gesendet' }).waitFor();
      expect(await page.locator('main').innerText()).not.toContain('gebucht');
      expect(await seriousAxeViolations(page)).toEqual([]);
      await saveScreenshot(page, 'booking-page-phone-requested');

      const [mail] = await sink.waitForMail(email);
      expect(mail!.template).toBe('booking-request-received');
    } finally {
      await context.close();
    }
  });

  it('asks which product when a slot offers several, and books the one chosen', async () => {
    const f = await setupMailProvider(app, { capacity: 1 });
    const second = await createProduct(f.api, f.crmId, f.providerRef, { name: 'Beratungsgespräch' });
    const updated = await f.api.post(`${f.base}/resources/${enc(f.resourceRef)}`, { products: [f.productRef, second] });
    expect(updated.status, updated.text).toBe(202);
    const context = await newVisitor(browser, { ...DESKTOP, locale: 'de-DE' });
    const page = await context.newPage();
    try {
      await page.goto(bookingPageUrl(app.baseUrl, f.resourceUuid, `week=${f.day}`));
      await slotButton(page, '09:00').click();
      const choice = page.getByRole('group', { name: 'Welche Leistung möchten Sie buchen?' });
      await choice.waitFor();
      expect(await choice.getByRole('radio').count()).toBe(2);
      expect(await seriousAxeViolations(page)).toEqual([]);
      // By keyboard: the first product is preselected; arrow to the second one, Tab to "Weiter", Enter.
      const radios = choice.getByRole('radio');
      expect(await radios.first().isChecked()).toBe(true);
      const chosen = (await choice.locator('label').nth(1).textContent())!;
      await radios.first().focus();
      await page.keyboard.press('ArrowDown');
      expect(await radios.nth(1).isChecked()).toBe(true);
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.locator('#hold').filter({ hasText: /\S/ }).waitFor();
      await fillConsumerForm(page, { firstname: 'Bea', lastname: 'Ratung', email: `${unique('choice')}@example.com` }, DE_LABELS);
      await page.getByRole('button', { name: 'Verbindlich buchen' }).click();
      await page.getByRole('heading', { name: 'Ihr Termin ist gebucht' }).waitFor();
      expect(await page.locator('.details').innerText()).toContain(chosen);
    } finally {
      await context.close();
    }
  });

  it('says in plain words when the service limits requests (429 with Retry-After) and keeps the list; books in neutral words when the booking process cannot be read', async () => {
    const f = await setupMailProvider(app, { capacity: 2 });
    const context = await newVisitor(browser, { ...DESKTOP, locale: 'en-GB' });
    const page = await context.newPage();
    try {
      // The rate limiter answers like this (another issue adds it); here the browser gets that answer once.
      await page.route('**/reserve_appointment*', (route) =>
        route.fulfill({
          status: 429,
          headers: { 'Content-Type': 'application/json', 'Retry-After': '7' },
          body: JSON.stringify({ 'api-info': { version: '1' }, errors: [{ errorCode: 'RATE_LIMITED', message: 'Too many requests' }] }),
        }),
        { times: 1 },
      );
      // And public_data (the channel's booking process) fails all along: the booking still goes through, in neutral words.
      await page.route('**/resources/public_data*', (route) => route.fulfill({ status: 503, body: '' }));
      await page.goto(bookingPageUrl(app.baseUrl, f.resourceRef, `lang=en&week=${f.day}`));
      await slotButton(page, '09:00').click();
      await page.getByRole('alert').getByText('Too many attempts in a short time. Please wait 7 seconds, then try again.').waitFor();
      await slotButton(page, '09:00').waitFor();
      // The next try goes through.
      await slotButton(page, '09:00').click();
      await page.getByRole('heading', { name: 'Your appointment' }).waitFor();
      expect(await page.getByRole('alert').textContent()).toBe('');
      await fillConsumerForm(page, { firstname: 'Neutral', lastname: 'Words', email: `${unique('neutral')}@example.com` }, EN_LABELS);
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await page.getByRole('heading', { name: 'Your booking has been received' }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('embeds with one script tag on another site: an iframe on RESOURCE_REFERENCE that grows with its content; CALENDAR_PUBLIC with several resources', async () => {
    const f = await setupMailProvider(app, { capacity: 2 });
    // A second resource of the provider with a slot at the same time, for the plug-in with all resources.
    const second = await createResource(f.api, f.crmId, f.providerRef, { products: [f.productRef], publicName: 'Bruno Broker' });
    const timeslot = await f.api.post(`${f.base}/timeslots`, {
      timeslots: [{ resourceReference: second, start: `${f.day}T09:00`, end: `${f.day}T10:00`, raster: 30, defaultCapacity: 1, defaultAcceptBookings: true, state: 'BOOKABLE' }],
    });
    expect(timeslot.status, timeslot.text).toBe(201);
    const provider = await serveHostPage(
      `<!doctype html><html lang="en"><head><title>Provider site</title></head><body><h1>Our flats</h1>
<script src="${app.baseUrl}/embed.js" data-ref="${f.resourceRef}" data-lang="en" data-week="${f.day}" data-title="Book a viewing" async></script>
<h2>All our agents</h2><div id="all"></div>
<script src="${app.baseUrl}/embed.js" data-ref="${f.resourceRef}, ${second}" data-channel="CALENDAR_PUBLIC" data-lang="en" data-week="${f.day}" data-target="#all" data-title="Book with any agent" async></script>
<p id="after">Footer</p></body></html>`,
      `script-src ${app.baseUrl}; frame-src ${app.baseUrl}`,
    );
    const context = await newVisitor(browser, { ...DESKTOP, locale: 'en-GB' });
    const page = await context.newPage();
    try {
      // A host page on another origin (another port of this machine), with a CSP of its own that allows the widget's origin only.
      await page.goto(`${provider.url}/flats.html`);
      const iframe = page.locator('iframe[title="Book a viewing"]');
      await iframe.waitFor();
      const src = new URL((await iframe.getAttribute('src'))!);
      expect(src.origin).toBe(app.baseUrl);
      expect(src.searchParams.get('channelKey')).toBe('RESOURCE_REFERENCE');
      expect(src.searchParams.get('embed')).toBe('1');
      const frame = page.frameLocator('iframe[title="Book a viewing"]');
      await frame.getByText('All times in the time zone Europe/Berlin.').waitFor();
      await frame.locator('button.slot').first().waitFor();
      // The host resizes the iframe to the height the widget reports.
      await expect
        .poll(async () => {
          const outer = await iframe.evaluate((element) => element.getBoundingClientRect().height);
          const inner = await frame.locator('html').evaluate((element) => element.scrollHeight);
          return Math.abs(outer - inner);
        })
        .toBeLessThanOrEqual(1);

      const all = page.locator('#all iframe[title="Book with any agent"]');
      await all.waitFor();
      const allSrc = new URL((await all.getAttribute('src'))!);
      expect(allSrc.searchParams.get('channelKey')).toBe('CALENDAR_PUBLIC');
      expect(allSrc.searchParams.getAll('ref')).toEqual([second]);
      // Both resources' 09:00 slots, each naming its resource.
      const nine = page.frameLocator('#all iframe').locator('button.slot').filter({ hasText: /^09:00–/ });
      await expect.poll(() => nine.count()).toBe(2);
      expect((await nine.allTextContents()).join(' | ')).toMatch(/Bruno Broker/);
      expect((await nine.allTextContents()).join(' | ')).toContain(f.resourceName);
    } finally {
      await context.close();
      await provider.close();
    }
  });
});

/** A provider's web site: one HTML page on a port of its own, so another origin than the gateway. */
async function serveHostPage(html: string, csp: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': csp });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://localhost:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
