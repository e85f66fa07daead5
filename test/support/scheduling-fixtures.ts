import { setupProvider, type ProviderFixture } from './fixtures.js';
import type { TestApp } from './harness.js';
import { apiClient, type ApiClient } from './http.js';
import { unique } from './http.js';
import { createProduct, createResource, enc } from './offerings-fixtures.js';

export const RESOURCE_ADDRESS = { city: 'Berlin', zip: '10115', street: 'Invalidenstraße', number: '1', countryCode: 'DE' };

export interface SchedulingFixture extends ProviderFixture {
  crmId: string;
  /** The CRM's key, for clients of a second gateway. */
  key: string;
  api: ApiClient;
  /** `/crms/:crmId/provider/:providerRef` */
  base: string;
  productRef: string;
  resourceRef: string;
}

/** A fresh CRM with a provider (Europe/Berlin unless told), a product and a resource with an address offering it. */
export async function setupScheduling(app: TestApp, options: { timeZone?: string } = {}): Promise<SchedulingFixture> {
  const { crmId, key, api } = await app.newCrm();
  const provider = await setupProvider(api, crmId, options.timeZone ? { timeZone: options.timeZone } : {});
  const productRef = await createProduct(api, crmId, provider.providerRef);
  const resourceRef = await createResource(api, crmId, provider.providerRef, { products: [productRef], address: RESOURCE_ADDRESS });
  return { ...provider, crmId, key, api, base: `/crms/${crmId}/provider/${enc(provider.providerRef)}`, productRef, resourceRef };
}

/** Creates a single appointment through REST (capacity 5 unless told) and returns the wrapped appointment. */
export async function createAppointment(f: SchedulingFixture, body: Record<string, unknown> = {}): Promise<any> {
  const res = await f.api.post(`${f.base}/appointments`, {
    reference: `appointment-${unique()}@test`,
    start: '2027-03-01T10:00',
    end: '2027-03-01T11:00',
    resourceReference: f.resourceRef,
    productReference: f.productRef,
    capacity: 5,
    ...body,
  });
  if (res.status !== 201) throw new Error(`appointment fixture failed: ${res.status} ${res.text}`);
  return res.body.appointment;
}

/** Creates a customer through REST and returns its reference. */
export async function createCustomer(f: SchedulingFixture, body: Record<string, unknown> = {}): Promise<string> {
  const customerReference = (body.customerReference as string | undefined) ?? `customer-${unique()}@test`;
  const res = await f.api.post(`${f.base}/customers`, {
    providerReference: f.providerRef,
    userName: 'Carla Customer',
    email: `${unique('carla')}@example.com`,
    ...body,
    customerReference,
  });
  if (res.status !== 201) throw new Error(`customer fixture failed: ${res.status} ${res.text}`);
  return customerReference;
}

/** Creates a participation through REST (a new customer unless given); returns the response. */
export async function addParticipation(
  f: SchedulingFixture,
  appointmentReference: string,
  options: { state?: string; customerReference?: string; reference?: string; query?: string; message?: string } = {},
) {
  const customerReference = options.customerReference ?? (await createCustomer(f));
  const reference = options.reference ?? `participation-${unique()}@test`;
  const res = await f.api.post(`${f.base}/participations${options.query ? `?${options.query}` : ''}`, {
    reference,
    appointmentReference,
    customerReference,
    state: options.state ?? 'BOOKED',
    ...(options.message === undefined ? {} : { message: options.message }),
  });
  return { res, reference, customerReference };
}

export interface MailRow {
  id: string;
  topic: string;
  payload: { template: string; params: Record<string, string | null>; message?: string | null; recipient?: unknown; personal?: boolean; erased?: boolean };
  dispatched_at: Date | null;
}

/** Mail rows in the outbox about a participation, found by its reference. */
export async function mailRowsOfParticipation(app: TestApp, crmId: string, participationReference: string): Promise<MailRow[]> {
  return app
    .context()
    .em.getConnection()
    .execute<MailRow[]>(
      `select o.id, o.topic, o.payload, o.dispatched_at from outbox_message o
         join participation p on p.id::text = o.payload->'params'->>'participationId'
        where o.kind = 'mail' and p.crm_id = ? and p.reference = ? order by o.id`,
      [crmId, participationReference],
    );
}

/** Mail rows in the outbox about an appointment, found by its reference. */
export async function mailRowsOfAppointment(app: TestApp, crmId: string, appointmentReference: string): Promise<MailRow[]> {
  return app
    .context()
    .em.getConnection()
    .execute<MailRow[]>(
      `select o.id, o.topic, o.payload, o.dispatched_at from outbox_message o
         join appointment a on a.id::text = o.payload->'params'->>'appointmentId'
        where o.kind = 'mail' and a.crm_id = ? and a.reference = ? order by o.id`,
      [crmId, appointmentReference],
    );
}

/** Every mail row of a CRM's appointments (also of appointments deleted since: matched by the ids given). */
export async function mailRowsOfAppointmentIds(app: TestApp, appointmentIds: string[]): Promise<MailRow[]> {
  if (!appointmentIds.length) return [];
  return app
    .context()
    .em.getConnection()
    .execute<MailRow[]>(
      `select id, topic, payload, dispatched_at from outbox_message
        where kind = 'mail' and payload->'params'->>'appointmentId' in (${appointmentIds.map(() => '?').join(',')}) order by id`,
      appointmentIds,
    );
}

/** Runs a query on the test database. */
export async function sql<T = Record<string, unknown>>(app: TestApp, query: string, params: unknown[] = []): Promise<T[]> {
  return app.context().em.getConnection().execute<T[]>(query, params);
}

/**
 * Books the slot [from, to) (UTC) of a BOOKABLE timeslot through the public booking flow (reserve step), which turns the
 * slot into an appointment made from the timeslot. Returns that appointment as the /crms listing shows it.
 */
export async function reserveTimeslotSlot(f: SchedulingFixture, resourceRef: string, timeslotUuid: string, from: string, to: string): Promise<any> {
  const resource = (await f.api.get(`${f.base}/resources`)).body.find((r: { reference: string }) => r.reference === resourceRef);
  const product = (await f.api.get(`${f.base}/products`)).body.find((p: { reference: string }) => p.reference === f.productRef);
  const res = await apiClient(f.api.baseUrl).post(`/rest/1/resources/${resource.uuid}/reserve_appointment`, {
    timeslot_uuid: timeslotUuid,
    product_uuid: product.uuid,
    from,
    to,
  });
  if (res.status !== 200) throw new Error(`reserve fixture failed: ${res.status} ${res.text}`);
  const appointmentUuid = res.body.participation.appointment_uuid;
  const list = await f.api.get(`${f.base}/appointments`);
  return list.body.find((a: { uuid: string }) => a.uuid === appointmentUuid);
}
