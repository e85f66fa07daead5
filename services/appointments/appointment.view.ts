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
  return {
    uuid: appointment.id,
    reference: appointment.reference,
    acceptBookings: appointment.acceptBookings,
    address: toLocationView(appointment.address),
    archived: appointment.archived,
    capacity: appointment.capacity,
    contactReference: appointment.contact?.reference ?? null,
    description: appointment.description,
    start: formatUtc(appointment.start),
    end: formatUtc(appointment.end),
    notes: appointment.notes,
    participations: participations
      .filter((p) => !(p.state === 'RESERVED' && p.expiresAt && p.expiresAt <= now))
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
      .map((p) => {
        const { appointmentReference: _omit, ...view } = participationView(p);
        return view;
      }),
    price: appointment.price,
    productReference: appointment.product?.reference ?? null,
    productName: appointment.productName ?? appointment.product?.name ?? null,
    resourceReference: appointment.resource.reference,
    seriesId: appointment.seriesId,
    state: appointment.state,
  };
}

/** Relations toAppointmentView reads. */
export const APPOINTMENT_VIEW_POPULATE = ['resource', 'product', 'contact', 'participations', 'participations.customer'] as const;
