import type { BookingFixture } from './booking-fixtures.js';
import type { TestApp } from './harness.js';
import { apiClient, type ApiClient, type HttpResult, unique } from './http.js';
import { enc } from './offerings-fixtures.js';

/** The three spellings of a resource in booking-flow paths. */
export function resourceRefs(f: BookingFixture): { uuid: string; full: string; short: string } {
  const [id, platform] = f.resourceRef.split('@');
  return { uuid: f.resourceUuid, full: `${id}@${f.providerUuid}@${platform}`, short: f.resourceRef };
}

/** The slot `index` (0-based) of the fixture's timeslot as ISO instants. */
export function slotOf(f: BookingFixture, index: number, rasterMinutes = 30): { from: string; to: string } {
  const start = new Date(f.slot.from).getTime() + index * rasterMinutes * 60_000;
  return { from: new Date(start).toISOString(), to: new Date(start + rasterMinutes * 60_000).toISOString() };
}

/** GET upcoming_bookables; `query` is appended as is (e.g. `groupFormat=MMMM&ref=a&ref=b`). */
export function upcoming(client: ApiClient, ref: string, query = ''): Promise<HttpResult> {
  return client.get(`/resources/${enc(ref)}/upcoming_bookables${query ? `?${query}` : ''}`);
}

/** POST reserve_appointment for the fixture's first slot unless the body says otherwise. */
export function reserve(client: ApiClient, f: BookingFixture, body: Record<string, unknown> = {}, query = ''): Promise<HttpResult> {
  return client.post(`/rest/1/resources/${enc(f.resourceUuid)}/reserve_appointment${query ? `?${query}` : ''}`, {
    timeslot_uuid: f.timeslotUuid,
    product_uuid: f.productUuid,
    from: f.slot.from,
    to: f.slot.to,
    ...body,
  });
}

/** A complete consumer booking body for the fixture's first slot with a fresh e-mail. */
export function consumerBody(f: BookingFixture, body: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    start: f.slot.from,
    end: f.slot.to,
    timeslot_uuid: f.timeslotUuid,
    product_uuid: f.productUuid,
    email: `${unique('consumer')}@example.com`,
    firstname: 'Clara',
    lastname: 'Consumer',
    ...body,
  };
}

/** POST create_appointment_with_consumer. */
export function book(client: ApiClient, f: BookingFixture, body: Record<string, unknown> = {}, query = ''): Promise<HttpResult> {
  return client.post(`/resources/${enc(f.resourceUuid)}/create_appointment_with_consumer${query ? `?${query}` : ''}`, consumerBody(f, body));
}

/** PUT the channel extension for the fixture's resource. */
export async function setChannel(f: BookingFixture, channelKey: string, body: Record<string, unknown>): Promise<HttpResult> {
  const res = await f.api.put(`/crms/${f.crmId}/provider/${enc(f.providerRef)}/resources/${enc(f.resourceRef)}/channels/${channelKey}`, body);
  if (res.status !== 200) throw new Error(`channel fixture failed: ${res.status} ${res.text}`);
  return res;
}

/** Runs a query on the test database. */
export const sql = <T = Record<string, unknown>>(app: TestApp, query: string, params: unknown[] = []): Promise<T[]> =>
  app.context().em.getConnection().execute<T[]>(query, params);

/** A client of the gateway with the given base URL and no key. */
export const publicClient = (baseUrl: string): ApiClient => apiClient(baseUrl);

/** Every bookable of an upcoming_bookables answer, in order (group keys and public_visible dropped). */
export function bookablesOf(body: Record<string, unknown>): any[] {
  return Object.entries(body)
    .filter(([key]) => key !== 'public_visible')
    .flatMap(([, value]) => value as any[]);
}

export interface ParticipationRow {
  id: string;
  state: string;
  expires_at: Date | null;
  customer_id: string | null;
  locale: string | null;
  messages: string[] | null;
  channel_key: string | null;
}

/** Participations of an appointment straight from the database. */
export const participationsOf = (app: TestApp, appointmentId: string) =>
  sql<ParticipationRow>(app, 'select id, state, expires_at, customer_id, locale, messages, channel_key from participation where appointment_id = ? order by created_at', [appointmentId]);

/** Appointments made from a timeslot. */
export const appointmentsOfTimeslot = (app: TestApp, timeslotId: string) =>
  sql<{ id: string; start: Date; capacity: number; state: string }>(app, 'select id, start, capacity, state from appointment where timeslot_id = ? order by start', [timeslotId]);

/** Mail templates written to the outbox about a participation. */
export async function mailTemplatesOf(app: TestApp, participationId: string): Promise<string[]> {
  const rows = await sql<{ template: string }>(
    app,
    `select payload->>'template' as template from outbox_message where kind = 'mail' and payload->'params'->>'participationId' = ? order by id`,
    [participationId],
  );
  return rows.map((row) => row.template);
}

/** `/crms/:crmId/provider/:providerRef` of the fixture. */
export const providerPath = (f: BookingFixture): string => `/crms/${f.crmId}/provider/${enc(f.providerRef)}`;

/** Creates one more timeslot (BOOKABLE, raster 30, capacity 3 unless told) and returns its UUID. */
export async function addTimeslot(f: BookingFixture, body: Record<string, unknown>): Promise<string> {
  const res = await f.api.post(`${providerPath(f)}/timeslots`, {
    timeslots: [{ resourceReference: f.resourceRef, raster: 30, defaultCapacity: 3, defaultAcceptBookings: true, state: 'BOOKABLE', ...body }],
  });
  if (res.status !== 201) throw new Error(`timeslot fixture failed: ${res.status} ${res.text}`);
  return res.body.timeslots[0].uuid;
}

/** Creates one more resource of the fixture's provider and returns its reference and UUID. */
export async function addResource(f: BookingFixture, body: Record<string, unknown> = {}): Promise<{ ref: string; uuid: string }> {
  const ref = (body.reference as string | undefined) ?? `resource-${unique()}@test`;
  const res = await f.api.post(`${providerPath(f)}/resources`, { publicName: 'Second agent', internalName: 'second', products: [f.productRef], ...body, reference: ref });
  if (res.status !== 201) throw new Error(`resource fixture failed: ${res.status} ${res.text}`);
  return { ref, uuid: res.body.uuid };
}

/** Creates one more product of the fixture's provider and returns its reference and UUID. */
export async function addProduct(f: BookingFixture, body: Record<string, unknown> = {}): Promise<{ ref: string; uuid: string }> {
  const ref = `product-${unique()}@test`;
  const res = await f.api.post(`${providerPath(f)}/products`, { name: 'Consultation', ...body, reference: ref });
  if (res.status !== 201) throw new Error(`product fixture failed: ${res.status} ${res.text}`);
  return { ref, uuid: res.body.product.uuid };
}

/** Changes a resource through the CRM API (e.g. `{ archived: true }` or `{ products: [...] }`). */
export async function updateResource(f: BookingFixture, ref: string, body: Record<string, unknown>): Promise<void> {
  const res = await f.api.post(`${providerPath(f)}/resources/${enc(ref)}`, body);
  if (res.status !== 202) throw new Error(`resource update failed: ${res.status} ${res.text}`);
}
