import type { Appointment } from '../appointments/appointment.entity.js';
import { OCCUPYING_SQL } from '../booking/bookability.js';
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
export async function announceTimeslot(
  ctx: Context,
  timeslot: Timeslot,
  previous: PreviousGrid | null = null,
  excluding: readonly string[] = [],
  lots: readonly string[] | null = null,
): Promise<void> {
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
    lots: lots && [...lots],
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
 * Announces the timeslots of the appointment's resource that its blocked
 * period reaches and that have not ended: an appointment that appears, is
 * cancelled or goes away changes which of their slots are free (overlap with
 * the blocked periods, products' lead and follow-up time). The reach is the
 * appointment's stored blocked period widened to the longest lead and
 * follow-up time of its provider's products, so it also covers an
 * appointment whose row is gone or not written yet. `excluding` names
 * appointments being deleted in this transaction; `announced` collects
 * timeslot ids already announced.
 */
export async function announceTimeslotsAround(
  ctx: Context,
  appointment: Pick<Appointment, 'start' | 'end'> & { id?: string; resource: Resource | string },
  excluding: readonly string[] = [],
  announced = new Set<string>(),
): Promise<void> {
  const resourceId = typeof appointment.resource === 'string' ? appointment.resource : appointment.resource.id;
  const [reach] = await ctx.em.execute<{ low_ms: number; high_ms: number }[]>(
    `select ${MS(`least(?::timestamptz - make_interval(mins => coalesce(max(p.lead_time_minutes), 0)),
                        coalesce((select blocked_from from appointment where id = ?), 'infinity'))`)} as low_ms,
            ${MS(`greatest(?::timestamptz + make_interval(mins => coalesce(max(p.follow_up_time_minutes), 0)),
                        coalesce((select blocked_to from appointment where id = ?), '-infinity'))`)} as high_ms
       from product p where p.provider_id = (select provider_id from resource where id = ?)`,
    [appointment.start, appointment.id ?? null, appointment.end, appointment.id ?? null, resourceId],
  );
  const timeslots = await ctx.em.find(
    Timeslot,
    { resource: resourceId, start: { $lt: new Date(reach!.high_ms) }, end: { $gt: new Date(Math.max(reach!.low_ms, ctx.clock.now().getTime())) } },
    { orderBy: { start: 'asc' } },
  );
  for (const timeslot of timeslots) {
    if (announced.has(timeslot.id)) continue;
    announced.add(timeslot.id);
    // Only the free slots around move, and the appointment's own slot: the other appointments' places did not change.
    await announceTimeslot(ctx, timeslot, null, excluding, appointment.id ? [appointment.id] : []);
  }
}

/** An instant as epoch milliseconds (a JavaScript number) in SQL. */
const MS = (expression: string) => `floor(extract(epoch from ${expression}) * 1000)::float8`;

interface GridRow {
  id: string;
  timeslot_id: string | null;
  product_id: string | null;
  start_ms: number;
  end_ms: number;
  blocked_from_ms: number;
  blocked_to_ms: number;
  capacity: number;
  active: boolean;
  listed: boolean;
  taken: number;
}

/**
 * Appointments of the resource that matter for the grid [from, to), as plain
 * rows in one query: active ones whose blocked period reaches into it (they
 * hide the Bookable slots they block; found by the gist index on active
 * blocked periods) and every appointment made from this timeslot (a
 * cancelled one still holds its slot), with the places taken of those the
 * booking flow lists.
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
  const now = ctx.clock.now();
  const rows = await ctx.em.execute<GridRow[]>(
    `select a.id, a.timeslot_id, a.product_id, ${MS('a.start')} as start_ms, ${MS('a."end"')} as end_ms,
            ${MS('a.blocked_from')} as blocked_from_ms, ${MS('a.blocked_to')} as blocked_to_ms, a.capacity,
            (a.state = 'ACTIVE' and not a.archived) as active, l.listed, coalesce(o.taken, 0) as taken
       from appointment a
       left join timeslot t on t.id = a.timeslot_id
       cross join lateral (select ?::boolean and a.state = 'ACTIVE' and not a.archived and a.accept_bookings
                                  and (t.state is null or t.state = 'BOOKABLE') as listed) l
       left join lateral (
         select count(*)::int as taken from participation p where p.appointment_id = a.id and l.listed and ${OCCUPYING_SQL}
       ) o on true
      where a.resource_id = ? and a.id <> all(?::uuid[])
        and ((a.state = 'ACTIVE' and not a.archived and tstzrange(a.blocked_from, a.blocked_to) && tstzrange(?, ?))
             or (a.timeslot_id = ? and a.start < ? and a."end" > ?))
      order by a.start
      limit ?`,
    [open, now, resource.id, `{${excluding.join(',')}}`, period.start, period.end, timeslot.id, period.end, period.start, GRID_APPOINTMENTS_MAX + 1],
  );
  if (rows.length > GRID_APPOINTMENTS_MAX) return null;
  const iso = (ms: number) => new Date(ms).toISOString();
  return rows.map((row) => ({
    appointmentId: row.id,
    timeslotId: row.timeslot_id,
    productId: row.product_id,
    start: iso(row.start_ms),
    end: iso(row.end_ms),
    blockedStart: iso(row.blocked_from_ms),
    blockedEnd: iso(row.blocked_to_ms),
    capacity: row.capacity,
    capacityLeft: row.listed ? Math.max(0, row.capacity - row.taken) : 0,
    active: row.active,
  }));
}
