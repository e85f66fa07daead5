import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';

/** The page of a resource; `query` is appended as is (e.g. `lang=en`). */
export const bookingPageUrl = (baseUrl: string, ref: string, query = ''): string => `${baseUrl}/book/${encodeURIComponent(ref)}${query ? `?${query}` : ''}`;

/** Monday (yyyy-MM-dd) of the week of a day. */
function mondayOf(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  return new Date(date.getTime() - ((date.getUTCDay() + 6) % 7) * 86_400_000).toISOString().slice(0, 10);
}

/** Today (yyyy-MM-dd) in a zone. */
const todayIn = (timeZone: string): string => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());

/**
 * Opens the page and pages forward to the week of `day` (yyyy-MM-dd in the
 * provider's zone), waiting for each week's list; `nextWeek` is the button's
 * text in the page's language.
 */
export async function openWeekOf(page: Page, url: string, day: string, timeZone: string, nextWeek: RegExp): Promise<void> {
  await page.goto(url);
  const weeks = Math.round((Date.parse(mondayOf(day)) - Date.parse(mondayOf(todayIn(timeZone)))) / (7 * 86_400_000));
  await page.locator('.list-status').filter({ hasText: /\S/ }).waitFor();
  for (let i = 0; i < weeks; i++) {
    const before = await page.locator('#week-title').textContent();
    await page.getByRole('button', { name: nextWeek }).click();
    await expect.poll(() => page.locator('#week-title').textContent()).not.toBe(before);
  }
}

/** The button of the slot that starts at `time` (HH:mm, provider's zone). */
export const slotButton = (page: Page, time: string): Locator => page.locator('button.slot').filter({ hasText: new RegExp(`^${time}–`) });

/** Fills the consumer form (first name, last name, e-mail, and optionally mobile and message). */
export async function fillConsumerForm(page: Page, consumer: { firstname: string; lastname: string; email: string; mobile?: string; message?: string }, labels: Record<'firstname' | 'lastname' | 'email' | 'mobile' | 'message', RegExp>): Promise<void> {
  await page.getByLabel(labels.firstname).fill(consumer.firstname);
  await page.getByLabel(labels.lastname).fill(consumer.lastname);
  await page.getByLabel(labels.email).fill(consumer.email);
  if (consumer.mobile) await page.getByLabel(labels.mobile).fill(consumer.mobile);
  if (consumer.message) await page.getByLabel(labels.message).fill(consumer.message);
}

export const EN_LABELS = { firstname: /^First name/, lastname: /^Last name/, email: /^E-mail address/, mobile: /^Mobile number/, message: /^Message to the provider/ };
export const DE_LABELS = { firstname: /^Vorname/, lastname: /^Nachname/, email: /^E-Mail-Adresse/, mobile: /^Mobilnummer/, message: /^Nachricht an den Anbieter/ };
