import type { Browser, Page, WebSocketRoute } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.js';
import { isolatedDatabase } from '../support/isolated-database.js';
import { unique } from '../support/http.js';
import { bookingPageUrl, EN_LABELS, fillConsumerForm, openFirstFreeWeek, slotButton } from '../support/booking-page.js';
import { DESKTOP, launchBrowser, newVisitor, saveScreenshot } from '../support/browser.js';
import { bookSlot, type MailFixture, setupMailProvider } from '../support/mail-fixtures.js';

const LIVE = 'The list updates itself.';

/** Books the slot at `time` through the page, as a visitor would, and waits for the confirmation. */
async function bookThroughPage(page: Page, time: string): Promise<void> {
  await slotButton(page, time).click();
  await page.getByRole('heading', { name: 'Your appointment' }).waitFor();
  await fillConsumerForm(page, { firstname: 'Live', lastname: 'Visitor', email: `${unique('live')}@example.com` }, EN_LABELS);
  await page.getByRole('button', { name: 'Book now' }).click();
  await page.getByRole('heading', { name: 'Your appointment is booked' }).waitFor();
}

/** Opens the week of the fixture's slots in English and waits until the page follows live capacity. */
async function openLive(page: Page, app: TestApp, f: MailFixture): Promise<void> {
  await openFirstFreeWeek(page, bookingPageUrl(app.baseUrl, f.resourceRef, 'lang=en'));
  await page.getByText(LIVE).waitFor();
  await slotButton(page, '09:00').waitFor();
}

describe('booking page: live capacity over graphql-ws, hold expiry, reconnection', () => {
  let app: TestApp;
  let browser: Browser;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  beforeAll(async () => {
    db = await isolatedDatabase('page_live');
    // The hold sweep runs when a test calls it (after moving the service's clock), not on its own.
    [app, browser] = await Promise.all([startTestApp({ config: { databaseUrl: db.url }, worker: { relayPollMs: 200, sweepMs: 10 * 60_000 } }), launchBrowser()]);
  });
  afterEach(() => app.clock.reset());
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await db?.drop();
  });

  it('two visitors: when one takes places, the other sees fewer places, and the last place vanish, within 2 s', async () => {
    const f = await setupMailProvider(app, { capacity: 2 });
    const [booker, watcher] = await Promise.all([newVisitor(browser, DESKTOP), newVisitor(browser, DESKTOP)]);
    try {
      const [a, b] = await Promise.all([booker.newPage(), watcher.newPage()]);
      await Promise.all([openLive(a, app, f), openLive(b, app, f)]);
      const watched = slotButton(b, '09:00');
      expect(await watched.textContent()).toContain('2 places left');

      const firstClick = Date.now();
      await bookThroughPage(a, '09:00');
      await expect.poll(() => watched.textContent(), { timeout: Math.max(0, 2000 - (Date.now() - firstClick)) + 1 }).toContain('1 place left');

      await a.getByRole('button', { name: 'Book another appointment' }).click();
      await expect.poll(() => slotButton(a, '09:00').textContent()).toContain('1 place left');
      const lastClick = Date.now();
      await slotButton(a, '09:00').click();
      await watched.waitFor({ state: 'detached', timeout: 2000 });
      expect(Date.now() - lastClick).toBeLessThan(2000);
      // The other slots stay, with their places.
      expect(await slotButton(b, '09:30').textContent()).toContain('2 places left');
      await saveScreenshot(b, 'booking-page-desktop-live-list');
    } finally {
      await Promise.all([booker.close(), watcher.close()]);
    }
  });

  it('shows the hold running out; the freed place reappears for others; taken meanwhile, the form says so in plain words and shows the list', async () => {
    const f = await setupMailProvider(app, { capacity: 1 });
    const [holder, other] = await Promise.all([newVisitor(browser, DESKTOP), newVisitor(browser, DESKTOP)]);
    try {
      // The holder's browser runs on a clock the test moves; the service runs on the settable clock.
      await holder.clock.install();
      const [h, o] = await Promise.all([holder.newPage(), other.newPage()]);
      await Promise.all([openLive(h, app, f), openLive(o, app, f)]);

      await slotButton(h, '10:00').click();
      await h.getByRole('heading', { name: 'Your appointment' }).waitFor();
      expect(await h.locator('#hold').textContent()).toMatch(/^Reserved for you: [23]:\d\d minutes left\.$/);
      await slotButton(o, '10:00').waitFor({ state: 'detached', timeout: 2000 });

      // The hold's time is up for the service; the worker's sweep removes it and announces the free place.
      app.clock.advance(app.config.holdMs + 1000);
      await app.worker!.sweep();
      await slotButton(o, '10:00').waitFor({ timeout: 2000 });

      // A minute before the end the page tells screen readers; at the end everyone.
      await holder.clock.fastForward(app.config.holdMs - 60_000);
      await h.getByRole('status').filter({ hasText: 'Your reservation expires in one minute.' }).waitFor();
      await expect.poll(() => h.locator('#hold').textContent()).toMatch(/^Reserved for you: 0:[5-6]\d minutes left\.$/);
      await holder.clock.fastForward(60_000);
      await h.getByRole('alert').getByText('Your reservation has expired').waitFor();
      expect(await h.locator('#hold').textContent()).toBe('');

      await bookThroughPage(o, '10:00');
      await fillConsumerForm(h, { firstname: 'Late', lastname: 'Holder', email: `${unique('late')}@example.com` }, EN_LABELS);
      await h.getByRole('button', { name: 'Book now' }).click();
      await h.getByRole('alert').getByText('Sorry, this time has just been taken by someone else.').waitFor();
      // Back on the list, refreshed: the taken slot is gone, the others are there.
      await slotButton(h, '09:30').waitFor();
      expect(await slotButton(h, '10:00').count()).toBe(0);
      await saveScreenshot(h, 'booking-page-desktop-taken');
    } finally {
      await Promise.all([holder.close(), other.close()]);
    }
  });

  it('after a lost connection it reconnects and reloads, so a change made meanwhile shows', async () => {
    const f = await setupMailProvider(app, { capacity: 3 });
    const visitor = await newVisitor(browser, DESKTOP);
    let blocked = false;
    const sockets: WebSocketRoute[] = [];
    // Every WebSocket of the page goes through the test, which can cut it and refuse new ones for a while.
    await visitor.routeWebSocket(
      (url) => url.pathname === '/graphql',
      (socket) => {
        // 1013 "try again later": graphql-ws retries it, as it would a gateway that went away.
        if (blocked) return socket.close({ code: 1013, reason: 'blocked by the test' });
        sockets.push(socket);
        socket.connectToServer();
      },
    );
    try {
      const page = await visitor.newPage();
      await openLive(page, app, f);
      expect(await slotButton(page, '09:00').textContent()).toContain('3 places left');

      blocked = true;
      for (const socket of sockets) await socket.close({ code: 1012, reason: 'gateway restart' });
      await page.getByText('Connection lost').waitFor();
      // Booked while the page hears nothing: only a reload after reconnecting can show it.
      await bookSlot(app, f, 0);
      blocked = false;
      await page.getByText(LIVE).waitFor({ timeout: 15_000 });
      await expect.poll(() => slotButton(page, '09:00').textContent(), { timeout: 5000 }).toContain('2 places left');
      expect(sockets.length).toBeGreaterThanOrEqual(2);
    } finally {
      await visitor.close();
    }
  });
});
