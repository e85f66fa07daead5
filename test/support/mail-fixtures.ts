import { expect } from 'vitest';
import type { TestApp } from './harness.js';
import { apiClient, type ApiClient, unique } from './http.js';
import { createProduct, createResource, enc } from './offerings-fixtures.js';
import type { SunkMail } from './smtp-sink.js';

export const MAIL_ADDRESS = { city: 'Berlin', zip: '10115', street: 'Invalidenstraße', number: '1', countryCode: 'DE' };

export interface MailFixture {
  crmId: string;
  api: ApiClient;
  /** `/crms/:crmId/provider/:providerRef` */
  base: string;
  providerRef: string;
  providerName: string;
  /** The provider's own address, or null when mails go to the owner. */
  providerEmail: string | null;
  ownerEmail: string;
  productRef: string;
  productUuid: string;
  resourceRef: string;
  resourceUuid: string;
  resourceName: string;
  timeslotUuid: string;
  /** Slots of the timeslot: 09:00, 09:30, ... on the day in the provider's zone (ISO instants). */
  slots: { from: string; to: string }[];
  /** The day of the timeslot, yyyy-MM-dd in the provider's zone. */
  day: string;
}

/**
 * A provider (own zone, language, e-mail) with a product, a resource with
 * public name and address, and a BOOKABLE timeslot of `slots` 30-minute slots
 * from 09:00 (provider time) `startInDays` days from now.
 */
export async function setupMailProvider(
  app: TestApp,
  options: { timeZone?: string; language?: 'de' | 'en'; providerEmail?: string | null; slots?: number; capacity?: number; bookingProcess?: 'IMMEDIATE' | 'REQUESTED'; startInDays?: number } = {},
): Promise<MailFixture> {
  const { crmId, api } = await app.newCrm();
  const id = unique();
  const ownerEmail = `owner-${id}@example.com`;
  const ownerRef = `owner-${id}@test`;
  expect((await api.post(`/crms/${crmId}/user`, { reference: ownerRef, email: ownerEmail, username: `owner-${id}`, lastName: 'Owner', firstName: 'Olga' })).status).toBe(201);
  const accountRef = `account-${id}@test`;
  expect((await api.post(`/crms/${crmId}/account`, { ownerReference: ownerRef, accountReference: accountRef, branch: 'real-estate' })).status).toBe(201);
  const providerRef = `provider-${id}@test`;
  const providerName = `Makler ${id}`;
  const providerEmail = options.providerEmail === undefined ? `office-${id}@example.com` : options.providerEmail;
  const created = await api.post(`/crms/${crmId}/provider`, {
    reference: providerRef,
    ownerReference: ownerRef,
    accountReference: accountRef,
    name: providerName,
    email: providerEmail,
    timeZone: options.timeZone ?? 'Europe/Berlin',
    language: options.language ?? 'de',
  });
  expect(created.status, created.text).toBe(201);
  const base = `/crms/${crmId}/provider/${enc(providerRef)}`;
  const productRef = await createProduct(api, crmId, providerRef, { name: 'Wohnungsbesichtigung' });
  const resourceName = `Anna Agent ${id}`;
  const resourceRef = await createResource(api, crmId, providerRef, { products: [productRef], publicName: resourceName, internalName: 'anna', address: MAIL_ADDRESS });
  if (options.bookingProcess) {
    const res = await api.put(`${base}/resources/${enc(resourceRef)}/channels/RESOURCE_PUBLIC`, { bookingProcess: options.bookingProcess });
    expect(res.status, res.text).toBe(200);
  }
  const day = new Date(app.clock.now().getTime() + (options.startInDays ?? 7) * 86_400_000).toISOString().slice(0, 10);
  const slotCount = options.slots ?? 4;
  const endMinutes = 9 * 60 + 30 * slotCount;
  const timeslot = await api.post(`${base}/timeslots`, {
    timeslots: [
      {
        resourceReference: resourceRef,
        start: `${day}T09:00`,
        end: `${day}T${String(Math.floor(endMinutes / 60)).padStart(2, '0')}:${String(endMinutes % 60).padStart(2, '0')}`,
        raster: 30,
        defaultCapacity: options.capacity ?? 3,
        defaultAcceptBookings: true,
        state: 'BOOKABLE',
      },
    ],
  });
  expect(timeslot.status, timeslot.text).toBe(201);
  const first = new Date(timeslot.body.timeslots[0].start).getTime();
  const products = await api.get(`${base}/products`);
  const resources = await api.get(`${base}/resources`);
  return {
    crmId,
    api,
    base,
    providerRef,
    providerName,
    providerEmail,
    ownerEmail,
    productRef,
    productUuid: products.body.find((p: { reference: string }) => p.reference === productRef).uuid,
    resourceRef,
    resourceUuid: resources.body.find((r: { reference: string }) => r.reference === resourceRef).uuid,
    resourceName,
    timeslotUuid: timeslot.body.timeslots[0].uuid,
    slots: Array.from({ length: slotCount }, (_, i) => ({
      from: new Date(first + i * 30 * 60_000).toISOString(),
      to: new Date(first + (i + 1) * 30 * 60_000).toISOString(),
    })),
    day,
  };
}

/** Reserves slot `index` and completes the booking as a consumer; returns the createdAppointment and the e-mail used. */
export async function bookSlot(
  app: TestApp,
  f: MailFixture,
  index: number,
  consumer: { email?: string; locale?: string; message?: string; firstname?: string; lastname?: string } = {},
): Promise<{ email: string; created: any; participationId: string }> {
  const anonymous = apiClient(app.baseUrl);
  const slot = f.slots[index]!;
  const reserveOnce = () =>
    anonymous.post(`/rest/1/resources/${enc(f.resourceUuid)}/reserve_appointment`, {
      timeslot_uuid: f.timeslotUuid,
      product_uuid: f.productUuid,
      from: slot.from,
      to: slot.to,
    });
  let reserved = await reserveOnce();
  // Concurrent first bookings of one timeslot may be asked to retry (409 CONFLICT), as a real widget would.
  for (let retry = 0; reserved.status === 409 && reserved.body?.errors?.[0]?.errorCode === 'CONFLICT' && retry < 10; retry++) {
    await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80));
    reserved = await reserveOnce();
  }
  if (reserved.status !== 200) throw new Error(`reserve failed: ${reserved.status} ${reserved.text}`);
  const email = consumer.email ?? `${unique('consumer')}@example.com`;
  const booked = await anonymous.post(`/resources/${enc(f.resourceUuid)}/create_appointment_with_consumer`, {
    start: slot.from,
    end: slot.to,
    timeslot_uuid: f.timeslotUuid,
    product_uuid: f.productUuid,
    placeholder_id: reserved.body.participation.customer_uuid,
    email,
    firstname: consumer.firstname ?? 'Clara',
    lastname: consumer.lastname ?? 'Consumer',
    ...(consumer.locale ? { locale: consumer.locale } : {}),
    ...(consumer.message ? { message: consumer.message } : {}),
  });
  if (booked.status !== 201) throw new Error(`booking failed: ${booked.status} ${booked.text}`);
  return { email, created: booked.body.createdAppointment, participationId: reserved.body.participation.uuid };
}

/** The fields of the single VEVENT and the calendar of an .ics text (folded lines joined). */
export function parseIcs(content: string): { calendar: Record<string, string>; event: Record<string, string>; raw: string; vtimezones: string[] } {
  const lines = content.replace(/\r\n[ \t]/g, '').split(/\r\n|\n/);
  const calendar: Record<string, string> = {};
  const event: Record<string, string> = {};
  const vtimezones: string[] = [];
  let inEvent = false;
  let depth = 0;
  for (const line of lines) {
    if (line === 'BEGIN:VEVENT') inEvent = true;
    else if (line === 'END:VEVENT') inEvent = false;
    else if (line.startsWith('BEGIN:')) depth++;
    else if (line.startsWith('END:')) depth--;
    if (line.startsWith('TZID:')) vtimezones.push(line.slice(5));
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1);
    if (inEvent) event[name.split(';')[0]!] = line.slice(name.split(';')[0]!.length);
    else if (depth === 1 && !line.startsWith('BEGIN:') && !line.startsWith('END:')) calendar[name] = value;
  }
  return { calendar, event, raw: content, vtimezones };
}

/** The one .ics attachment of a mail, parsed; fails when there is none. */
export function icsOf(mail: SunkMail) {
  const ics = mail.attachments.filter((a) => a.contentType.startsWith('text/calendar') || a.filename.endsWith('.ics'));
  expect(ics, `${mail.template} should carry one .ics`).toHaveLength(1);
  return { ...parseIcs(ics[0]!.content), contentType: ics[0]!.contentType, filename: ics[0]!.filename };
}

/** No calendar attachment. */
export function expectNoIcs(mail: SunkMail): void {
  expect(mail.attachments.filter((a) => a.contentType.startsWith('text/calendar') || a.filename.endsWith('.ics'))).toHaveLength(0);
}
