import type { Appointment } from '../appointments/appointment.entity.js';
import type { Context } from '../kernel/context.js';
import { TOPICS } from '../kernel/jobs.js';
import { formatUtc } from '../kernel/wall-clock.js';
import { type OutboxDraft, writeOutbox } from '../outbox/outbox.service.js';
import type { Participation, ParticipationState } from '../participations/participation.entity.js';

/** What happened to an appointment, as the CRM subscription `appointmentChanged` reports it. */
export const APPOINTMENT_CHANGES = [
  'PARTICIPATION_ADDED',
  'PARTICIPATION_STATE_CHANGED',
  'HOLD_EXPIRED',
  'APPOINTMENT_CANCELLED',
  'APPOINTMENT_DELETED',
] as const;
export type AppointmentChange = (typeof APPOINTMENT_CHANGES)[number];

/**
 * Payload of the `appointment-changed` topic. It carries ids and states only,
 * never personal data; `crmId` and `providerId` let each gateway hand it to
 * the subscriptions of that CRM and provider alone.
 */
export interface AppointmentChangedEvent {
  change: AppointmentChange;
  crmId: string;
  providerId: string;
  appointmentUuid: string;
  appointmentReference: string;
  /** The appointment's state after the change (ACTIVE or CANCELLED; CANCELLED for a deleted one). */
  appointmentState: string;
  participationUuid: string | null;
  participationReference: string | null;
  /** The participation's state after the change; null for appointment-wide changes and for a removed hold. */
  state: ParticipationState | null;
  previousState: ParticipationState | null;
  /** When the change was made (service clock), UTC. */
  at: string;
}

/** What an appointment change names: an entity, or the plain facts a write path already has. */
export interface ChangedAppointment {
  id: string;
  reference: string;
  state: Appointment['state'];
  crm: { id: string };
  provider: { id: string };
}

/**
 * Writes an appointment change to the outbox in the caller's transaction,
 * so the CRM hears it after, and only if, the change commits.
 */
export function announceAppointmentChange(
  ctx: Context,
  change: AppointmentChange,
  appointment: ChangedAppointment,
  participation: Pick<Participation, 'id' | 'reference' | 'state'> | null = null,
  previousState: ParticipationState | null = null,
): void {
  const draft = appointmentChangeDraft(ctx, change, appointment, participation, previousState);
  writeOutbox(ctx.em, draft);
}

/** The outbox row of an appointment change, for writers that insert their outbox rows themselves. */
export function appointmentChangeDraft(
  ctx: Context,
  change: AppointmentChange,
  appointment: ChangedAppointment,
  participation: Pick<Participation, 'id' | 'reference' | 'state'> | null = null,
  previousState: ParticipationState | null = null,
): OutboxDraft {
  const event: AppointmentChangedEvent = {
    change,
    crmId: appointment.crm.id,
    providerId: appointment.provider.id,
    appointmentUuid: appointment.id,
    appointmentReference: appointment.reference,
    appointmentState: appointment.state,
    participationUuid: participation?.id ?? null,
    participationReference: participation?.reference ?? null,
    state: participation && change !== 'HOLD_EXPIRED' ? participation.state : null,
    previousState,
    at: formatUtc(ctx.clock.now()),
  };
  return { kind: 'event', topic: TOPICS.appointmentChanged, payload: { ...event } };
}

/**
 * What a CRM is told of an appointment change, in one vocabulary for the
 * `appointmentChanged` subscription and the webhooks: the event without the
 * internal ids, with the provider's reference.
 */
export function appointmentChangeView<R extends string | null>(event: AppointmentChangedEvent, providerReference: R) {
  return {
    change: event.change,
    providerReference,
    appointmentUuid: event.appointmentUuid,
    appointmentReference: event.appointmentReference,
    appointmentState: event.appointmentState,
    participationUuid: event.participationUuid,
    participationReference: event.participationReference,
    state: event.state,
    previousState: event.previousState,
    at: event.at,
  };
}

/** Reads a payload from Redis; undefined when it is not an appointment change. */
export function readAppointmentEvent(payload: unknown): AppointmentChangedEvent | undefined {
  if (!payload || typeof payload !== 'object') return undefined;
  const p = payload as Partial<AppointmentChangedEvent>;
  if (typeof p.crmId !== 'string' || typeof p.providerId !== 'string' || typeof p.appointmentUuid !== 'string') return undefined;
  if (!APPOINTMENT_CHANGES.includes(p.change as AppointmentChange)) return undefined;
  return p as AppointmentChangedEvent;
}
