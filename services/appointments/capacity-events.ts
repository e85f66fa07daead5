import type { Context } from '../kernel/context.js';
import { TOPICS } from '../kernel/jobs.js';
import type { SlotCapacityEvent } from '../live/capacity-event.js';
import { writeOutbox } from '../outbox/outbox.service.js';
import { Participation } from '../participations/participation.entity.js';
import type { Resource } from '../resources/resource.entity.js';
import { slotAt } from '../timeslots/slot-grid.js';
import type { Timeslot } from '../timeslots/timeslot.entity.js';
import { Appointment } from './appointment.entity.js';

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

/** True while a resource's slots can be listed publicly at all. */
export const resourceOpen = (resource: Resource): boolean => !resource.archived && !resource.deletedAt;

/**
 * Whether `upcoming_bookables` lists the appointment as a LotAppointment
 * (given places are left): active, not archived, open for bookings, its
 * timeslot (if any) BOOKABLE, its resource open.
 */
export function listedAsLot(appointment: Appointment, resource: Resource, timeslot: Timeslot | null): boolean {
  return (
    appointment.state === 'ACTIVE' &&
    !appointment.archived &&
    appointment.acceptBookings &&
    (!timeslot || timeslot.state === 'BOOKABLE') &&
    resourceOpen(resource)
  );
}

/**
 * The version stamp of a capacity event: PostgreSQL's clock, read inside the
 * transaction after the lock of the change was taken, so later changes of
 * the same slot carry larger values whichever gateway or worker made them.
 */
export async function eventVersion(ctx: Context): Promise<number> {
  const [row] = await ctx.em.execute<{ version: string }[]>(`select (extract(epoch from clock_timestamp()) * 1000000)::bigint as version`);
  return Number(row!.version);
}

/**
 * Writes the appointment's slot as the booking flow now sees it to the
 * outbox, in the caller's transaction (which holds the appointment's lock),
 * so subscribers hear it after, and only if, the change commits.
 */
export async function announceCapacity(ctx: Context, appointment: Appointment): Promise<void> {
  // Counting below reads the database, so the caller's pending changes must be in it.
  await ctx.em.flush();
  await ctx.em.populate(appointment, ['resource', 'timeslot']);
  const listed = listedAsLot(appointment, appointment.resource, appointment.timeslot);
  const event: SlotCapacityEvent = {
    scope: 'slot',
    version: await eventVersion(ctx),
    resourceId: appointment.resource.id,
    timeslotId: appointment.timeslot?.id ?? null,
    appointmentId: appointment.id,
    productId: appointment.product?.id ?? null,
    kind: 'models.LotAppointment',
    start: appointment.start.toISOString(),
    end: appointment.end.toISOString(),
    capacity: appointment.capacity,
    capacityLeft: listed ? await capacityLeft(ctx, appointment) : 0,
  };
  writeOutbox(ctx.em, { kind: 'event', topic: TOPICS.capacityChanged, payload: { ...event } });
}

/**
 * Announces the slot of an appointment that is being deleted (with the
 * others in `deleted`, e.g. a whole series): a slot cut from a BOOKABLE
 * timeslot is a Bookable with its default capacity again, unless another
 * active appointment overlaps it; any other slot is gone (0 places).
 */
export async function announceAppointmentRemoved(ctx: Context, appointment: Appointment, deleted: readonly Appointment[] = [appointment]): Promise<void> {
  await ctx.em.populate(appointment, ['resource', 'timeslot']);
  const timeslot = appointment.timeslot;
  const slot = timeslot ? slotAt(timeslot, appointment.start, appointment.end) : null;
  const base = {
    scope: 'slot' as const,
    resourceId: appointment.resource.id,
    start: appointment.start.toISOString(),
    end: appointment.end.toISOString(),
  };
  let event: SlotCapacityEvent;
  if (timeslot && slot) {
    const free = timeslot.state === 'BOOKABLE' && resourceOpen(appointment.resource);
    const overlapping = free
      ? await ctx.em.count(Appointment, {
          resource: appointment.resource,
          id: { $nin: deleted.map((a) => a.id) },
          state: 'ACTIVE',
          archived: false,
          start: { $lt: appointment.end },
          end: { $gt: appointment.start },
        })
      : 0;
    event = {
      ...base,
      version: await eventVersion(ctx),
      timeslotId: timeslot.id,
      appointmentId: null,
      productId: null,
      kind: 'models.Bookable',
      capacity: timeslot.defaultCapacity,
      capacityLeft: free && overlapping === 0 ? timeslot.defaultCapacity : 0,
    };
  } else {
    event = {
      ...base,
      version: await eventVersion(ctx),
      timeslotId: timeslot?.id ?? null,
      appointmentId: appointment.id,
      productId: appointment.product?.id ?? null,
      kind: 'models.LotAppointment',
      capacity: appointment.capacity,
      capacityLeft: 0,
    };
  }
  writeOutbox(ctx.em, { kind: 'event', topic: TOPICS.capacityChanged, payload: { ...event } });
}

/**
 * Announces appointments a CRM just created (one, or a series): nobody takes
 * part yet, so each is listed with all its places if it is open for
 * bookings, else its slot shows 0. One version read for the whole batch.
 */
export async function announceNewAppointments(ctx: Context, appointments: readonly Appointment[]): Promise<void> {
  if (!appointments.length) return;
  await ctx.em.flush();
  await ctx.em.populate(appointments as Appointment[], ['resource', 'timeslot']);
  const version = await eventVersion(ctx);
  for (const appointment of appointments) {
    const event: SlotCapacityEvent = {
      scope: 'slot',
      version,
      resourceId: appointment.resource.id,
      timeslotId: appointment.timeslot?.id ?? null,
      appointmentId: appointment.id,
      productId: appointment.product?.id ?? null,
      kind: 'models.LotAppointment',
      start: appointment.start.toISOString(),
      end: appointment.end.toISOString(),
      capacity: appointment.capacity,
      capacityLeft: listedAsLot(appointment, appointment.resource, appointment.timeslot) ? appointment.capacity : 0,
    };
    writeOutbox(ctx.em, { kind: 'event', topic: TOPICS.capacityChanged, payload: { ...event } });
  }
}
