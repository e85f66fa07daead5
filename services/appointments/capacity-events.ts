import type { Context } from '../kernel/context.js';
import { TOPICS } from '../kernel/jobs.js';
import { resourceOpen, type SlotCapacityEvent } from '../live/capacity-event.js';
import { eventVersion, versionOfAppointmentChange } from '../live/event-version.js';
import { type OutboxDraft, writeOutbox, writeOutboxMany } from '../outbox/outbox.service.js';
import type { Resource } from '../resources/resource.entity.js';
import { lotListed } from '../booking/bookability.js';
import { announceTimeslotsAround } from '../timeslots/timeslot-events.js';
import { capacityLeft } from './occupancy.js';
import type { Timeslot } from '../timeslots/timeslot.entity.js';
import type { Appointment } from './appointment.entity.js';

/**
 * Whether `upcoming_bookables` lists the appointment as a LotAppointment
 * (given places are left), by the one bookability rule.
 */
export function listedAsLot(appointment: Appointment, resource: Resource, timeslot: Timeslot | null, now: Date): boolean {
  return lotListed(
    {
      state: appointment.state,
      archived: appointment.archived,
      acceptBookings: appointment.acceptBookings,
      startMs: appointment.start.getTime(),
      capacity: appointment.capacity,
      timeslotState: timeslot?.state ?? null,
      resourceOpen: resourceOpen(resource),
    },
    now.getTime(),
  );
}

/** The slot event of an appointment as it stands; `capacityLeft` is computed by the caller. */
function slotEvent(appointment: Appointment, version: number, capacityLeft: number): SlotCapacityEvent {
  return {
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
    capacityLeft,
  };
}

const publish = (ctx: Context, event: SlotCapacityEvent) => writeOutbox(ctx.em, { kind: 'event', topic: TOPICS.capacityChanged, payload: { ...event } });

/**
 * Writes the appointment's slot as the booking flow now sees it to the
 * outbox, in the caller's transaction (which holds the appointment's lock),
 * so subscribers hear it after, and only if, the change commits. When the
 * appointment row itself was written in this transaction (created from a
 * slot, cancelled, archived) the slots around it may have changed too (an
 * overlap or a product's lead/follow-up time), so the timeslots it overlaps
 * are announced as well.
 */
export async function announceCapacity(ctx: Context, appointment: Appointment): Promise<void> {
  // Counting below reads the database, so the caller's pending changes must be in it.
  await ctx.em.flush();
  await ctx.em.populate(appointment, ['resource', 'timeslot']);
  const listed = listedAsLot(appointment, appointment.resource, appointment.timeslot, ctx.clock.now());
  const left = listed ? await capacityLeft(ctx, appointment) : 0;
  const { version, written } = await versionOfAppointmentChange(ctx, appointment.id);
  publish(ctx, slotEvent(appointment, version, left));
  if (written) await announceTimeslotsAround(ctx, appointment);
}

/** The facts of a booking-flow appointment a claim already holds: enough to announce its slot without reading it back. */
export interface ClaimedSlot {
  id: string;
  resourceId: string;
  timeslotId: string | null;
  productId: string | null;
  start: Date;
  end: Date;
  capacity: number;
}

/**
 * The capacity event of a booking-flow appointment's slot after a claim, as
 * an outbox draft: the statement that gives the place fills in
 * `capacityLeft` and `version` under the appointment's lock.
 */
export function claimedSlotEvent(slot: ClaimedSlot): OutboxDraft {
  const event: Omit<SlotCapacityEvent, 'capacityLeft' | 'version'> = {
    scope: 'slot',
    resourceId: slot.resourceId,
    timeslotId: slot.timeslotId,
    appointmentId: slot.id,
    productId: slot.productId,
    kind: 'models.LotAppointment',
    start: slot.start.toISOString(),
    end: slot.end.toISOString(),
    capacity: slot.capacity,
  };
  return { kind: 'event', topic: TOPICS.capacityChanged, payload: { ...event } };
}

/**
 * When a claim created a booking-flow appointment and blocked time may
 * reach other slots (some product of the resource has lead or follow-up
 * time), the timeslots around it are announced too.
 */
export async function announceSlotsAroundClaim(ctx: Context, slot: ClaimedSlot): Promise<void> {
  await announceTimeslotsAround(ctx, { id: slot.id, resource: slot.resourceId, start: slot.start, end: slot.end });
}

/**
 * What decides how the slot of a removed booking-flow appointment reads
 * again, besides its timeslot: whether some product of the provider keeps
 * lead or follow-up time (then its neighbours may open up too), and whether
 * another active appointment's blocked period covers the slot. Its `?`s
 * bind LOT_REMOVAL_PARAMS.
 */
export const LOT_REMOVAL_FACTS = `exists (select 1 from product where provider_id = ? and (coalesce(lead_time_minutes, 0) > 0 or coalesce(follow_up_time_minutes, 0) > 0)) as blocked_time,
  exists (select 1 from appointment where resource_id = ? and id <> ? and state = 'ACTIVE' and not archived
             and tstzrange(blocked_from, blocked_to) && tstzrange(?::timestamptz, ?::timestamptz)) as busy`;
export const lotRemovalParams = (lot: { id: string; providerId: string; resourceId: string; start: Date; end: Date }) => [lot.providerId, lot.resourceId, lot.id, lot.start, lot.end];

/**
 * The slot of a removed booking-flow appointment as a Bookable again: its
 * timeslot's default places while the timeslot is BOOKABLE, the resource
 * open and no other appointment's blocked period covers it, else 0. The
 * caller stamps the version.
 */
export function freedSlotEvent(
  lot: { resourceId: string; start: Date; end: Date },
  timeslot: { id: string; state: string; defaultCapacity: number },
  facts: { resourceOpen: boolean; busy: boolean },
): Omit<SlotCapacityEvent, 'version'> {
  const open = timeslot.state === 'BOOKABLE' && facts.resourceOpen && !facts.busy;
  return {
    scope: 'slot',
    resourceId: lot.resourceId,
    timeslotId: timeslot.id,
    appointmentId: null,
    productId: null,
    kind: 'models.Bookable',
    start: lot.start.toISOString(),
    end: lot.end.toISOString(),
    capacity: timeslot.defaultCapacity,
    capacityLeft: open ? timeslot.defaultCapacity : 0,
  };
}

/**
 * Announces the slot of a booking-flow appointment that was just removed
 * (its last hold expired): the slot is a Bookable again with its timeslot's
 * default places, unless another appointment's blocked period covers it.
 * One slot event, so a subscriber hears one change per freed hold. Where
 * products of the provider have lead or follow-up time the neighbours may
 * open up too, and the timeslots around it are announced instead.
 */
export async function announceLotRemoved(ctx: Context, appointment: Appointment): Promise<void> {
  await ctx.em.populate(appointment, ['resource', 'timeslot']);
  const timeslot = appointment.timeslot;
  const lot = { id: appointment.id, providerId: appointment.provider.id, resourceId: appointment.resource.id, start: appointment.start, end: appointment.end };
  const [row] = await ctx.em.execute<{ blocked_time: boolean; busy: boolean }[]>(`select ${LOT_REMOVAL_FACTS}`, lotRemovalParams(lot));
  if (!timeslot || row!.blocked_time) return announceAppointmentRemoved(ctx, appointment);
  const event = freedSlotEvent(lot, timeslot, { resourceOpen: resourceOpen(appointment.resource), busy: row!.busy });
  publish(ctx, { ...event, version: await eventVersion(ctx) });
}

/**
 * Announces appointments that are being deleted (with the others in
 * `deleted`, e.g. a whole series): each one's slot goes to 0, and the
 * timeslots they overlap are announced without them, so a slot cut from a
 * BOOKABLE timeslot shows up again as a Bookable with its default capacity.
 */
export async function announceAppointmentRemoved(ctx: Context, appointment: Appointment, deleted: readonly Appointment[] = [appointment]): Promise<void> {
  await ctx.em.populate(appointment, ['resource', 'timeslot']);
  publish(ctx, slotEvent(appointment, await eventVersion(ctx), 0));
  // Called once per appointment of `deleted`: a timeslot the batch overlaps several times is announced once.
  const announced = announcedPerBatch.get(deleted) ?? new Set<string>();
  announcedPerBatch.set(deleted, announced);
  await announceTimeslotsAround(ctx, appointment, deleted.map((a) => a.id), announced);
}

const announcedPerBatch = new WeakMap<readonly Appointment[], Set<string>>();

/**
 * Announces appointments a CRM just created (one, or a series): nobody takes
 * part yet, so each is listed with all its places if it is open for
 * bookings, else its slot shows 0; the timeslots they overlap are announced
 * once each (their slots may now be blocked).
 */
export async function announceNewAppointments(ctx: Context, appointments: readonly Appointment[]): Promise<void> {
  if (!appointments.length) return;
  await ctx.em.flush();
  await ctx.em.populate(appointments as Appointment[], ['resource', 'timeslot']);
  const version = await eventVersion(ctx);
  // Inserted directly, 100 at a time: a series of 2000 keeps neither 2000 outbox entities in the unit of work nor the event loop.
  await writeOutboxMany(
    ctx.em,
    appointments.map((appointment) => ({
      kind: 'event' as const,
      topic: TOPICS.capacityChanged,
      payload: { ...slotEvent(appointment, version, listedAsLot(appointment, appointment.resource, appointment.timeslot, ctx.clock.now()) ? appointment.capacity : 0) },
    })),
  );
  const announced = new Set<string>();
  // One query per resource first: a series of 2000 appointments where no timeslot is near costs one round trip, not 4000.
  const byResource = new Map<string, Appointment[]>();
  for (const appointment of appointments) byResource.set(appointment.resource.id, [...(byResource.get(appointment.resource.id) ?? []), appointment]);
  for (const [resourceId, group] of byResource) {
    const from = new Date(Math.min(...group.map((a) => a.start.getTime())));
    const to = new Date(Math.max(...group.map((a) => a.end.getTime())));
    if (!(await timeslotNear(ctx, resourceId, from, to))) continue;
    for (const appointment of group) await announceTimeslotsAround(ctx, appointment, [], announced);
  }
}

/** Whether any timeslot of the resource lies within the longest lead and follow-up time of its provider's products around [from, to). */
async function timeslotNear(ctx: Context, resourceId: string, from: Date, to: Date): Promise<boolean> {
  const [row] = await ctx.em.execute<{ near: boolean }[]>(
    `with reach as (
       select coalesce(max(p.lead_time_minutes), 0) as lead, coalesce(max(p.follow_up_time_minutes), 0) as follow_up
         from product p where p.provider_id = (select provider_id from resource where id = ?)
     )
     select exists (
       select 1 from timeslot t, reach
        where t.resource_id = ? and t.start < ?::timestamptz + make_interval(mins => reach.follow_up)
          and t."end" > ?::timestamptz - make_interval(mins => reach.lead)
     ) as near`,
    [resourceId, resourceId, to, from],
  );
  return Boolean(row?.near);
}
