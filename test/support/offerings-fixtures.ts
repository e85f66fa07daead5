import { Appointment, type AppointmentState } from '../../services/appointments/appointment.entity.js';
import { CrmIntegration } from '../../services/crm/crm-integration.entity.js';
import { Customer } from '../../services/customers/customer.entity.js';
import { Participation, type ParticipationState } from '../../services/participations/participation.entity.js';
import { Provider } from '../../services/providers/provider.entity.js';
import { Resource } from '../../services/resources/resource.entity.js';
import type { TestApp } from './harness.js';
import type { ApiClient } from './http.js';
import { unique } from './http.js';

export const enc = encodeURIComponent;

/** Creates a user through the REST facade and returns its reference. */
export async function createUser(api: ApiClient, crmId: string): Promise<string> {
  const id = unique();
  const reference = `user-${id}@test`;
  const res = await api.post(`/crms/${crmId}/user`, { reference, email: `user-${id}@example.com`, username: `user-${id}`, lastName: 'Staff' });
  if (res.status !== 201) throw new Error(`user fixture failed: ${res.status} ${res.text}`);
  return reference;
}

/** Creates a user and adds it to the provider's staff. */
export async function createStaffUser(api: ApiClient, crmId: string, providerRef: string): Promise<string> {
  const reference = await createUser(api, crmId);
  const res = await api.post(`/crms/${crmId}/provider/${enc(providerRef)}/staff`, { userReference: reference });
  if (res.status !== 201) throw new Error(`staff fixture failed: ${res.status} ${res.text}`);
  return reference;
}

/** Creates a product and returns its reference. */
export async function createProduct(api: ApiClient, crmId: string, providerRef: string, body: Record<string, unknown> = {}): Promise<string> {
  const reference = (body.reference as string | undefined) ?? `product-${unique()}@test`;
  const res = await api.post(`/crms/${crmId}/provider/${enc(providerRef)}/products`, { name: 'Viewing', ...body, reference });
  if (res.status !== 201) throw new Error(`product fixture failed: ${res.status} ${res.text}`);
  return reference;
}

/** Creates a resource and returns its reference. */
export async function createResource(api: ApiClient, crmId: string, providerRef: string, body: Record<string, unknown> = {}): Promise<string> {
  const reference = (body.reference as string | undefined) ?? `resource-${unique()}@test`;
  const res = await api.post(`/crms/${crmId}/provider/${enc(providerRef)}/resources`, { publicName: 'Agent', internalName: 'agent', ...body, reference });
  if (res.status !== 201) throw new Error(`resource fixture failed: ${res.status} ${res.text}`);
  return reference;
}

/**
 * Writes an appointment row straight through the EntityManager (the
 * appointments API is built separately), with the given start offset from now.
 */
export async function insertAppointment(
  app: TestApp,
  at: { crmId: string; providerRef: string; resourceRef: string },
  options: { startInMinutes: number; state?: AppointmentState; capacity?: number },
): Promise<Appointment> {
  const em = app.context().em;
  const provider = await em.findOneOrFail(Provider, { crm: at.crmId, reference: at.providerRef });
  const resource = await em.findOneOrFail(Resource, { crm: at.crmId, provider, reference: at.resourceRef, deletedAt: null });
  const start = new Date(app.clock.now().getTime() + options.startInMinutes * 60_000);
  const appointment = em.create(Appointment, {
    crm: em.getReference(CrmIntegration, at.crmId),
    provider,
    resource,
    reference: `appointment-${unique()}@test`,
    start,
    end: new Date(start.getTime() + 60 * 60_000),
    capacity: options.capacity ?? 5,
    acceptBookings: true,
    state: options.state ?? 'ACTIVE',
    createdAt: new Date(),
  });
  await em.flush();
  return appointment;
}

/** Writes a participation (with a customer unless `customer: null`) straight through the EntityManager. */
export async function insertParticipation(
  app: TestApp,
  appointment: Appointment,
  options: { state: ParticipationState; email?: string | null; customer?: null; expiresInMinutes?: number },
): Promise<Participation> {
  const em = app.context().em;
  const crm = em.getReference(CrmIntegration, appointment.crm.id);
  const customer =
    options.customer === null
      ? null
      : em.create(Customer, {
          crm,
          provider: em.getReference(Provider, appointment.provider.id),
          reference: `customer-${unique()}@test`,
          userName: 'Carla Customer',
          email: options.email === undefined ? `customer-${unique()}@example.com` : options.email,
          createdAt: new Date(),
        });
  const participation = em.create(Participation, {
    crm,
    appointment: em.getReference(Appointment, appointment.id),
    customer,
    reference: `participation-${unique()}@test`,
    state: options.state,
    expiresAt: options.expiresInMinutes === undefined ? null : new Date(app.clock.now().getTime() + options.expiresInMinutes * 60_000),
    createdAt: new Date(),
    updatedAt: new Date(),
  });
  await em.flush();
  return participation;
}

/** Outbox rows whose payload names the appointment (mails in `params`, capacity events at the top level). */
export async function outboxRowsFor(app: TestApp, appointmentId: string): Promise<OutboxRow[]> {
  return app
    .context()
    .em.getConnection()
    .execute<OutboxRow[]>(
      `select kind, topic, payload from outbox_message where payload->>'appointmentId' = ? or payload->'params'->>'appointmentId' = ? order by id`,
      [appointmentId, appointmentId],
    );
}

export interface OutboxRow {
  kind: string;
  topic: string;
  payload: Record<string, any>;
}
