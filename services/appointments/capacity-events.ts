import type { Context } from '../kernel/context.js';
import { TOPICS } from '../kernel/jobs.js';
import { writeOutbox } from '../outbox/outbox.service.js';
import { Participation } from '../participations/participation.entity.js';
import type { Appointment } from './appointment.entity.js';

export interface CapacityChangedEvent {
  resourceId: string;
  appointmentId: string | null;
  timeslotId: string | null;
  start: string;
  end: string;
  capacity: number;
  capacityLeft: number;
}

/** Places still free in an appointment: capacity minus booked, requested and live (unexpired) holds. */
export async function capacityLeft(ctx: Context, appointment: Appointment): Promise<number> {
  const taken = await ctx.em.count(Participation, {
    appointment,
    $or: [
      { state: { $in: ['REQUESTED', 'BOOKED'] } },
      { state: 'RESERVED', expiresAt: { $gt: ctx.clock.now() } },
    ],
  });
  return Math.max(0, appointment.capacity - taken);
}

/**
 * Writes the appointment's new free capacity to the outbox, in the caller's
 * transaction, so subscribers hear it after (and only if) the change commits.
 */
export async function announceCapacity(ctx: Context, appointment: Appointment): Promise<void> {
  const event: CapacityChangedEvent = {
    resourceId: appointment.resource.id,
    appointmentId: appointment.id,
    timeslotId: appointment.timeslot?.id ?? null,
    start: appointment.start.toISOString(),
    end: appointment.end.toISOString(),
    capacity: appointment.capacity,
    capacityLeft: appointment.state === 'ACTIVE' ? await capacityLeft(ctx, appointment) : 0,
  };
  writeOutbox(ctx.em, { kind: 'event', topic: TOPICS.capacityChanged, payload: { ...event } });
}
