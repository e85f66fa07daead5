import type { Locator, Page } from 'playwright-core';

/** The page of a resource; `query` is appended as is (e.g. `lang=en`). */
export const bookingPageUrl = (baseUrl: string, ref: string, query = ''): string => `${baseUrl}/book/${encodeURIComponent(ref)}${query ? `?${query}` : ''}`;

/**
 * Opens the page without `week`: it shows the first week with a free time
 * (a fixture's own resource has only its own timeslots), and waits for it.
 */
export async function openFirstFreeWeek(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.locator('button.slot').first().waitFor();
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
