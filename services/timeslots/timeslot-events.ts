import { Appointment } from '../appointments/appointment.entity.js';
import { occupancyOf } from '../appointments/occupancy.js';
import type { Context } from '../kernel/context.js';
import { TOPICS } from '../kernel/jobs.js';
import { GRID_APPOINTMENTS_MAX, type GridAppointment, resourceOpen, type TimeslotCapacityEvent } from '../live/capacity-event.js';
import { eventVersion } from '../live/event-version.js';
import { writeOutbox } from '../outbox/outbox.service.js';
import type { Resource } from '../resources/resource.entity.js';
import { Timeslot } from './timeslot.entity.js';

/** The grid of a timeslot before an update moved it. */
export interface PreviousGrid {
  start: Date;
  end: Date;
  raster: number;
}

/**
 * Tells live calendars that a timeslot's slots changed (created, moved,
 * opened, closed or deleted): one event per timeslot, carrying the grid and
 * the appointments on it, which each gateway cuts into the slots its
 * subscribers watch. Pass `previous` when start, end or raster changed, so
 * the slots that disappeared are announced too.
 */
export async function announceTimeslot(ctx: Context, timeslot: Timeslot, previous: PreviousGrid | null = null, excluding: readonly string[] = []): Promise<void> {
  await ctx.em.populate(timeslot, ['resource']);
  const resource = timeslot.resource;
  const open = timeslot.state === 'BOOKABLE' && resourceOpen(resource);
  const moved =
    previous &&
    (previous.start.getTime() !== timeslot.start.getTime() || previous.end.getTime() !== timeslot.end.getTime() || previous.raster !== timeslot.raster)
      ? previous
      : null;
  const from = new Date(Math.min(timeslot.start.getTime(), moved?.start.getTime() ?? Infinity));
  const to = new Date(Math.max(timeslot.end.getTime(), moved?.end.getTime() ?? -Infinity));
  const event: TimeslotCapacityEvent = {
    scope: 'timeslot',
    version: 0,
    resourceId: resource.id,
    timeslotId: timeslot.id,
    appointmentId: null,
    start: timeslot.start.toISOString(),
    end: timeslot.end.toISOString(),
    raster: timeslot.raster,
    capacity: timeslot.defaultCapacity,
    capacityLeft: open ? timeslot.defaultCapacity : 0,
    open,
    previous: moved ? { start: moved.start.toISOString(), end: moved.end.toISOString(), raster: moved.raster } : null,
    appointments: await gridAppointments(ctx, timeslot, resource, open, { start: from, end: to }, excluding),
  };
  event.version = await eventVersion(ctx);
  writeOutbox(ctx.em, { kind: 'event', topic: TOPICS.capacityChanged, payload: { ...event } });
}

/**
 * Announces every timeslot of a resource that has not ended, e.g. when the
 * resource is deleted: its slots are no longer listed.
 */
export async function announceResourceTimeslots(ctx: Context, resource: Resource): Promise<void> {
  await ctx.em.flush();
  const timeslots = await ctx.em.find(Timeslot, { resource, end: { $gt: ctx.clock.now() } }, { orderBy: { start: 'asc' } });
  for (const timeslot of timeslots) await announceTimeslot(ctx, timeslot);
}

/**
 * Announces the timeslots of the appointment's resource that overlap it and
 * have not ended: an appointment that appears, is cancelled or goes away
 * changes which of their slots are free (overlap, products' lead and
 * follow-up time). `excluding` names appointments being deleted in this
 * transaction; `announced` collects timeslot ids already announced.
 */
export async function announceTimeslotsAround(ctx: Context, appointment: Appointment, excluding: readonly string[] = [], announced = new Set<string>()): Promise<void> {
  const timeslots = await ctx.em.find(
    Timeslot,
    { resource: appointment.resource, start: { $lt: appointment.end }, end: { $gt: new Date(Math.max(appointment.start.getTime(), ctx.clock.now().getTime())) } },
    { orderBy: { start: 'asc' } },
  );
  for (const timeslot of timeslots) {
    if (announced.has(timeslot.id)) continue;
    announced.add(timeslot.id);
    await announceTimeslot(ctx, timeslot, null, excluding);
  }
}

/**
 * Appointments of the resource overlapping [from, to) that matter for the
 * grid: active ones (they hide the Bookable slots they overlap) and every
 * appointment made from this timeslot (a cancelled one still holds its slot).
 */
async function gridAppointments(
  ctx: Context,
  timeslot: Timeslot,
  resource: Resource,
  open: boolean,
  period: { start: Date; end: Date },
  excluding: readonly string[],
): Promise<GridAppointment[] | null> {
  await ctx.em.flush();
  const found = await ctx.em.find(
    Appointment,
    {
      resource,
      id: { $nin: [...excluding] },
      start: { $lt: period.end },
      end: { $gt: period.start },
      $or: [{ state: 'ACTIVE', archived: false }, { timeslot }],
    },
    { orderBy: { start: 'asc' }, limit: GRID_APPOINTMENTS_MAX + 1 },
  );
  if (found.length > GRID_APPOINTMENTS_MAX) return null;
  const listed = found.filter((a) => open && a.state === 'ACTIVE' && !a.archived && a.acceptBookings);
  const occupancy = await occupancyOf(ctx, listed.map((a) => a.id));
  return found.map((a) => ({
    appointmentId: a.id,
    timeslotId: a.timeslot?.id ?? null,
    productId: a.product?.id ?? null,
    start: a.start.toISOString(),
    end: a.end.toISOString(),
    capacity: a.capacity,
    capacityLeft: listed.includes(a) ? Math.max(0, a.capacity - (occupancy.get(a.id) ?? 0)) : 0,
    active: a.state === 'ACTIVE' && !a.archived,
  }));
}
