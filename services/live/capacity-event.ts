import { BusyIndex } from '../booking/bookability.js';
import { cutSlots, type GridTimeslot, type Interval } from '../timeslots/slot-grid.js';

/**
 * The payloads of the `capacity-changed` topic and the pure logic that turns
 * them into slots. Writers (services/appointments/capacity-events.ts,
 * services/timeslots/timeslot-events.ts) put them into the outbox inside the
 * transaction of the change; the worker's relay publishes them to Redis as
 * JSON; every gateway reads them and filters per subscription.
 *
 * The numbers are those `upcoming_bookables` gives for the slot right after
 * the change: `capacityLeft` is 0 whenever the slot would not be listed
 * (full, cancelled, deleted, private, timeslot closed, resource archived or
 * deleted). Channel and product filters depend on the subscriber, so they
 * are applied by the gateway (services/live/capacity-feed.service.ts).
 */

export type BookableKind = 'models.Bookable' | 'models.LotAppointment';

/** An interval in ISO 8601 UTC. */
export interface IsoInterval {
  start: string;
  end: string;
}

/** One slot of a resource after a change. Instants are ISO 8601 UTC. */
export interface SlotState {
  resourceId: string;
  timeslotId: string | null;
  appointmentId: string | null;
  productId: string | null;
  kind: BookableKind;
  start: string;
  end: string;
  capacity: number;
  capacityLeft: number;
  /**
   * For a Bookable slot: its timeslot and the busy (blocked) periods around
   * it, so a subscriber's channel can check each product by the bookability
   * rule (services/booking/bookability.ts productFitsSlot).
   */
  room?: { timeslot: IsoInterval; busy: IsoInterval[] };
}

/** A change of one slot (an appointment's places, or a slot freed by deleting its appointment). */
export interface SlotCapacityEvent extends SlotState {
  scope: 'slot';
  /** PostgreSQL's clock_timestamp() in microseconds, read under the lock of the change: orders events of one slot. */
  version: number;
}

/** An appointment on or across a timeslot's grid, as it stood when the timeslot event was written. */
export interface GridAppointment {
  appointmentId: string;
  timeslotId: string | null;
  productId: string | null;
  start: string;
  end: string;
  /** Its blocked period (start − its product's lead time, end + follow-up time); absent in payloads of older code (then start and end). */
  blockedStart?: string;
  blockedEnd?: string;
  capacity: number;
  /** 0 unless the appointment is listed as a LotAppointment (active, open for bookings, its timeslot open). */
  capacityLeft: number;
  /** Active and not archived: its blocked period is busy and hides the Bookable slots it overlaps. */
  active: boolean;
}

/**
 * A change of a whole timeslot (created, moved, opened, closed, deleted, or
 * its resource deleted). One event per timeslot; each gateway cuts it into
 * slots for its subscribers, clipped to their window.
 */
export interface TimeslotCapacityEvent {
  scope: 'timeslot';
  version: number;
  resourceId: string;
  timeslotId: string;
  appointmentId: null;
  start: string;
  end: string;
  raster: number;
  /** The timeslot's default capacity. */
  capacity: number;
  /** Free places of an untouched slot: the default capacity while open, else 0. */
  capacityLeft: number;
  /** BOOKABLE, and its resource neither archived nor deleted. */
  open: boolean;
  /** The grid before a move (start, end or raster changed); its slots that no longer exist are announced as gone. */
  previous: { start: string; end: string; raster: number } | null;
  /** Appointments overlapping the timeslot (and the previous grid); null when too many to carry, then subscribers are told to refetch. */
  appointments: GridAppointment[] | null;
  /**
   * Which of the timeslot's own appointments the event announces: null for
   * all (the timeslot itself changed: opened, closed, moved), else only these
   * (an appointment nearby changed, which moves the free Bookable slots
   * around it but no other appointment's places). The others are left to
   * their own events, stamped under their own locks: this event read them
   * from a snapshot that may miss a booking committed meanwhile with an
   * earlier stamp, and would otherwise undo it at the subscriber.
   */
  lots?: string[] | null;
}

export type CapacityEvent = SlotCapacityEvent | TimeslotCapacityEvent;

/** More appointments than this in one timeslot event are not listed; the event then asks subscribers to refetch. */
export const GRID_APPOINTMENTS_MAX = 1000;

const isString = (value: unknown): value is string => typeof value === 'string';
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/**
 * Reads a payload from Redis. Payloads written by older code (no `scope`)
 * are read as slot events; anything unreadable is dropped (undefined).
 */
export function readCapacityEvent(payload: unknown): CapacityEvent | undefined {
  if (!payload || typeof payload !== 'object') return undefined;
  const p = payload as Record<string, unknown>;
  if (!isString(p.resourceId) || !isString(p.start) || !isString(p.end) || !isNumber(p.capacity) || !isNumber(p.capacityLeft)) return undefined;
  if (Number.isNaN(Date.parse(p.start)) || Number.isNaN(Date.parse(p.end))) return undefined;
  const version = isNumber(p.version) ? p.version : 0;
  if (p.scope === 'timeslot') {
    if (!isString(p.timeslotId) || !isNumber(p.raster) || p.raster <= 0) return undefined;
    const previous = p.previous as TimeslotCapacityEvent['previous'] | undefined;
    return {
      scope: 'timeslot',
      version,
      resourceId: p.resourceId,
      timeslotId: p.timeslotId,
      appointmentId: null,
      start: p.start,
      end: p.end,
      raster: p.raster,
      capacity: p.capacity,
      capacityLeft: p.capacityLeft,
      open: p.open === undefined ? p.capacityLeft > 0 : p.open === true,
      previous: previous && isString(previous.start) && isString(previous.end) && isNumber(previous.raster) ? previous : null,
      appointments: Array.isArray(p.appointments) ? (p.appointments as GridAppointment[]) : p.appointments === undefined ? [] : null,
      lots: Array.isArray(p.lots) ? p.lots.filter(isString) : null,
    };
  }
  const appointmentId = isString(p.appointmentId) ? p.appointmentId : null;
  return {
    scope: 'slot',
    version,
    resourceId: p.resourceId,
    timeslotId: isString(p.timeslotId) ? p.timeslotId : null,
    appointmentId,
    productId: isString(p.productId) ? p.productId : null,
    kind: p.kind === 'models.Bookable' || p.kind === 'models.LotAppointment' ? p.kind : appointmentId ? 'models.LotAppointment' : 'models.Bookable',
    start: p.start,
    end: p.end,
    capacity: p.capacity,
    capacityLeft: p.capacityLeft,
  };
}

/** True while a resource's slots can be listed publicly at all. */
export const resourceOpen = (resource: { archived: boolean; deletedAt: Date | null }): boolean => !resource.archived && !resource.deletedAt;

/** Identity of a slot for live calendars: a resource's slots never share start and end (timeslots of a resource do not overlap). */
export const slotKey = (resourceId: string, start: string, end: string): string => `${resourceId}|${Date.parse(start)}|${Date.parse(end)}`;

export interface ExpandOptions {
  /** Slots starting at or before now are not upcoming and are left out. */
  now: Date;
  from?: Date | null;
  to?: Date | null;
  /** At most this many slots; more answers null. */
  limit: number;
}

/**
 * Cuts a timeslot event into the slots `upcoming_bookables` would show (or
 * no longer shows) within [from, to): the slot of an appointment made from
 * the timeslot carries that appointment's numbers; a slot that overlaps the
 * blocked period of another active appointment has no place left (for any
 * product: every product's blocked period contains the slot); any other
 * slot has the default capacity while the timeslot is open, and carries the
 * busy periods so each subscriber's channel can check its products' lead and
 * follow-up time (capacity-feed.service.ts). Slots of the previous grid that
 * the move removed come with 0. Null when there are more than `limit`
 * slots, or the event could not list its appointments.
 */
export function slotsOfTimeslotEvent(event: TimeslotCapacityEvent, options: ExpandOptions): SlotState[] | null {
  if (event.appointments === null) return null;
  const appointments = event.appointments;
  const current = gridOf(event);
  const slots = upcomingSlots(current, options);
  if (slots === null) return null;
  const busy = appointments.filter((a) => a.active).map(blockedOf);
  const busyIndex = new BusyIndex(busy.map((period) => ({ startMs: Date.parse(period.start), endMs: Date.parse(period.end) })));
  const room = { timeslot: { start: event.start, end: event.end }, busy };
  const states: SlotState[] = [];
  const ownByStart = new Map(appointments.filter((a) => a.timeslotId === event.timeslotId).map((a) => [Date.parse(a.start), a]));
  for (const slot of slots) {
    const own = ownByStart.get(slot.start.getTime());
    if (own && event.lots && !event.lots.includes(own.appointmentId)) continue;
    if (own) {
      states.push({
        resourceId: event.resourceId,
        timeslotId: event.timeslotId,
        appointmentId: own.appointmentId,
        productId: own.productId,
        kind: 'models.LotAppointment',
        start: slot.start.toISOString(),
        end: slot.end.toISOString(),
        capacity: own.capacity,
        capacityLeft: event.open ? own.capacityLeft : 0,
      });
      continue;
    }
    const blocked = busyIndex.overlaps(slot.start.getTime(), slot.end.getTime());
    states.push({ ...bookable(event, slot, event.open && !blocked ? event.capacity : 0), room });
  }
  if (event.previous) {
    const before = upcomingSlots({ start: new Date(event.previous.start), end: new Date(event.previous.end), raster: event.previous.raster }, options);
    if (before === null) return null;
    const kept = new Set(slots.map((slot) => `${slot.start.getTime()}|${slot.end.getTime()}`));
    for (const slot of before) {
      if (!kept.has(`${slot.start.getTime()}|${slot.end.getTime()}`)) states.push(bookable(event, slot, 0));
    }
  }
  return states.length > options.limit ? null : states;
}

/** The busy period of an appointment of a timeslot event: its blocked period, or start and end in payloads without one. */
const blockedOf = (appointment: GridAppointment): IsoInterval => ({
  start: appointment.blockedStart ?? appointment.start,
  end: appointment.blockedEnd ?? appointment.end,
});

/** The part of the timeslot (and its previous grid) a subscriber's window sees, for a "refetch this period" notice. */
export function windowOfTimeslotEvent(event: TimeslotCapacityEvent, options: Pick<ExpandOptions, 'now' | 'from' | 'to'>): Interval | null {
  const starts = [Date.parse(event.start), event.previous ? Date.parse(event.previous.start) : Infinity];
  const ends = [Date.parse(event.end), event.previous ? Date.parse(event.previous.end) : -Infinity];
  const start = Math.max(Math.min(...starts), options.now.getTime(), options.from?.getTime() ?? -Infinity);
  const end = Math.min(Math.max(...ends), options.to?.getTime() ?? Infinity);
  return end > start ? { start: new Date(start), end: new Date(end) } : null;
}

const gridOf = (event: TimeslotCapacityEvent): GridTimeslot => ({ start: new Date(event.start), end: new Date(event.end), raster: event.raster });

/** Slots of a grid that start after now and within [from, to); null when more than `limit`. */
function upcomingSlots(grid: GridTimeslot, options: ExpandOptions): Interval[] | null {
  const lower = Math.max(options.now.getTime() + 1, options.from?.getTime() ?? -Infinity);
  const found = cutSlots(grid, { from: new Date(lower), limit: options.limit + 1 }).filter((slot) => !options.to || slot.start < options.to);
  return found.length > options.limit ? null : found;
}

function bookable(event: TimeslotCapacityEvent, slot: Interval, capacityLeft: number): SlotState {
  return {
    resourceId: event.resourceId,
    timeslotId: event.timeslotId,
    appointmentId: null,
    productId: null,
    kind: 'models.Bookable',
    start: slot.start.toISOString(),
    end: slot.end.toISOString(),
    capacity: event.capacity,
    capacityLeft,
  };
}
