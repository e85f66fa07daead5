import { validationError } from '../kernel/errors.js';

/**
 * The grid of a timeslot: bookable slots of `raster` minutes from its start.
 *
 * Everything here works on instants (epoch milliseconds), never on wall-clock
 * fields, so a slot is `raster` minutes of elapsed time. Across a
 * daylight-saving change the grid therefore neither repeats nor skips a slot:
 * on 2026-03-29 in Europe/Berlin, 00:00–06:00 local is 5 real hours (10 slots
 * of 30 minutes, none starting at 02:xx local); on 2026-10-25 it is 7 hours
 * (14 slots, with 02:00 and 02:30 local appearing twice, once per offset).
 */

export interface Interval {
  start: Date;
  end: Date;
}

export interface GridTimeslot extends Interval {
  /** Length of one slot in minutes. */
  raster: number;
}

export interface CutOptions {
  /** Leave out slots that start before this instant (e.g. now, for "upcoming" listings). */
  from?: Date;
  /** Return at most this many slots, a guard for long timeslots with a small raster. */
  limit?: number;
}

const MINUTE_MS = 60_000;

/** Slot length in milliseconds; a raster that is not a whole number of minutes > 0 is a 400. */
function rasterMs(timeslot: GridTimeslot): number {
  if (!Number.isInteger(timeslot.raster) || timeslot.raster <= 0) {
    throw validationError('raster must be a whole number of minutes greater than 0');
  }
  return timeslot.raster * MINUTE_MS;
}

function bounds(timeslot: Interval): { startMs: number; endMs: number } {
  const startMs = instantMs(timeslot.start, 'start');
  const endMs = instantMs(timeslot.end, 'end');
  return { startMs, endMs };
}

function instantMs(value: Date, field: string): number {
  const ms = value instanceof Date ? value.getTime() : Number.NaN;
  if (Number.isNaN(ms)) throw validationError(`${field} must be a valid date-time`);
  return ms;
}

/**
 * Cuts a timeslot into slots of `raster` real minutes from its start; a
 * remainder shorter than the raster at the end is dropped.
 */
export function cutSlots(timeslot: GridTimeslot, options: CutOptions = {}): Interval[] {
  const step = rasterMs(timeslot);
  const { startMs, endMs } = bounds(timeslot);
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  // Jump straight to the first slot at or after `from` instead of walking the past part of the grid.
  let index = 0;
  if (options.from) {
    const fromMs = instantMs(options.from, 'from');
    if (fromMs > startMs) index = Math.ceil((fromMs - startMs) / step);
  }
  const slots: Interval[] = [];
  for (let slotStart = startMs + index * step; slotStart + step <= endMs && slots.length < limit; slotStart += step) {
    slots.push({ start: new Date(slotStart), end: new Date(slotStart + step) });
  }
  return slots;
}

/** True when `start` is the start of one of the timeslot's slots (on the grid and the whole slot inside the timeslot). */
export function slotStartsOnGrid(timeslot: GridTimeslot, start: Date): boolean {
  return slotAt(timeslot, start) !== null;
}

/**
 * The slot of the grid that starts at `start`, or null when there is none.
 * With `end` given, the slot must also end there (a requested from/to pair).
 */
export function slotAt(timeslot: GridTimeslot, start: Date, end?: Date): Interval | null {
  const step = rasterMs(timeslot);
  const { startMs, endMs } = bounds(timeslot);
  const requestedStart = start instanceof Date ? start.getTime() : Number.NaN;
  if (Number.isNaN(requestedStart)) return null;
  const sinceStart = requestedStart - startMs;
  if (sinceStart < 0 || sinceStart % step !== 0 || requestedStart + step > endMs) return null;
  if (end !== undefined && !(end instanceof Date && end.getTime() === requestedStart + step)) return null;
  return { start: new Date(requestedStart), end: new Date(requestedStart + step) };
}
