import { toLocationView } from '../kernel/address-input.js';
import { formatUtc } from '../kernel/wall-clock.js';
import { type ParticipationView, toParticipationView } from '../participations/participation.service.js';
import type { Participation } from '../participations/participation.entity.js';
import type { Appointment, AppointmentState, Price } from './appointment.entity.js';

export interface AppointmentView<P extends ParticipationView = ParticipationView> {
  uuid: string;
  reference: string;
  acceptBookings: boolean;
  address: ReturnType<typeof toLocationView>;
  archived: boolean;
  capacity: number;
  contactReference: string | null;
  description: string | null;
  start: string;
  end: string;
  notes: string | null;
  participations: Omit<P, 'appointmentReference'>[];
  price: Price | null;
  productReference: string | null;
  productName: string | null;
  resourceReference: string;
  seriesId: string | null;
  state: AppointmentState;
}

/**
 * The appointment as /crms listings show it, times in UTC with `Z`. Expects
 * resource, product, contact and participations (with customers) loaded;
 * holds whose time is up are left out.
 */
export function toAppointmentView<P extends ParticipationView = ParticipationView>(
  appointment: Appointment,
  now: Date,
  participationView: (participation: Participation) => P = toParticipationView as (participation: Participation) => P,
): AppointmentView<P> {
  const participations = appointment.participations.isInitialized() ? appointment.participations.getItems() : [];
  return appointmentViewOf(
    appointment,
    {
      contactReference: appointment.contact?.reference ?? null,
      productReference: appointment.product?.reference ?? null,
      productName: appointment.productName ?? appointment.product?.name ?? null,
      resourceReference: appointment.resource.reference,
    },
    visibleParticipations(participations, now).map(participationView),
  );
}

/** What the /crms view shows of an appointment's own columns: an entity, or a row (readAppointmentViews). */
export interface AppointmentFacts {
  id: string;
  reference: string;
  acceptBookings: boolean;
  address: unknown;
  archived: boolean;
  capacity: number;
  description: string | null;
  start: Date;
  end: Date;
  notes: string | null;
  price: Price | null;
  seriesId: string | null;
  state: AppointmentState;
}

/** What the /crms view shows of an appointment's relations. */
export interface AppointmentRefs {
  contactReference: string | null;
  productReference: string | null;
  /** The name stored with the appointment, else its product's. */
  productName: string | null;
  resourceReference: string;
}

/** The /crms view of an appointment with the views of the participations it shows. */
export function appointmentViewOf<P extends ParticipationView>(appointment: AppointmentFacts, refs: AppointmentRefs, participations: P[]): AppointmentView<P> {
  return {
    uuid: appointment.id,
    reference: appointment.reference,
    acceptBookings: appointment.acceptBookings,
    address: toLocationView(appointment.address),
    archived: appointment.archived,
    capacity: appointment.capacity,
    contactReference: refs.contactReference,
    description: appointment.description,
    start: formatUtc(appointment.start),
    end: formatUtc(appointment.end),
    notes: appointment.notes,
    participations: participations.map((p) => {
      const { appointmentReference: _omit, ...view } = p;
      return view;
    }),
    price: appointment.price,
    productReference: refs.productReference,
    productName: refs.productName,
    resourceReference: refs.resourceReference,
    seriesId: appointment.seriesId,
    state: appointment.state,
  };
}

/** The participations an appointment view shows, oldest first: holds whose time is up are left out. */
export function visibleParticipations<T extends { state: string; expiresAt: Date | null; createdAt: Date }>(participations: readonly T[], now: Date): T[] {
  return participations.filter((p) => !(p.state === 'RESERVED' && p.expiresAt && p.expiresAt <= now)).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}

/** Relations toAppointmentView reads. */
export const APPOINTMENT_VIEW_POPULATE = ['resource', 'product', 'contact', 'participations', 'participations.customer'] as const;
