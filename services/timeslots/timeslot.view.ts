import type { AppointmentView } from '../appointments/appointment.view.js';
import type { ParticipationView } from '../participations/participation.service.js';
import { toLocationView } from '../kernel/address-input.js';
import { formatUtc } from '../kernel/wall-clock.js';
import type { Timeslot, TimeslotState } from './timeslot.entity.js';

export interface TimeslotView<P extends ParticipationView = ParticipationView> {
  uuid: string;
  reference: string;
  resourceReference: string;
  start: string;
  end: string;
  raster: number;
  defaultCapacity: number;
  defaultAcceptBookings: boolean;
  address: ReturnType<typeof toLocationView>;
  state: TimeslotState;
  appointments?: AppointmentView<P>[];
}

/** A timeslot as /crms endpoints show it: times in UTC with `Z`, the views of its appointments when given. */
export function toTimeslotView<P extends ParticipationView = ParticipationView>(timeslot: Timeslot, appointments?: AppointmentView<P>[]): TimeslotView<P> {
  return {
    uuid: timeslot.id,
    reference: timeslot.reference,
    resourceReference: timeslot.resource.reference,
    start: formatUtc(timeslot.start),
    end: formatUtc(timeslot.end),
    raster: timeslot.raster,
    defaultCapacity: timeslot.defaultCapacity,
    defaultAcceptBookings: timeslot.defaultAcceptBookings,
    address: toLocationView(timeslot.address),
    state: timeslot.state,
    ...(appointments ? { appointments } : {}),
  };
}
