import { z } from 'zod';
import { DomainError, validationError } from './errors.js';
import { isTimeZone } from './time-zone.js';
import { zoneOffsetMs } from './zone-offset.js';

/**
 * Reading and writing date-times at the API boundary.
 *
 * Input: ISO 8601 either with an offset or `Z` (an instant, taken as is) or
 * without one (`YYYY-MM-DDThh:mm`, optional `:ss` and fraction), which is a
 * wall-clock time in the provider's IANA zone. Wall times are resolved like
 * Temporal's `disambiguation: 'compatible'` (and java.time's ZonedDateTime.of):
 * - a wall time inside a spring-forward gap (2026-03-29T02:30 in Europe/Berlin)
 *   is read with the offset in force before the gap, so it lands the gap's
 *   length later: 03:30 CEST (01:30Z);
 * - an ambiguous wall time in a fall-back overlap (2026-10-25T02:30) takes the
 *   earlier instant, i.e. the summer-time one: 02:30 CEST (00:30Z).
 *
 * The resolution uses the zone's offsets at instants (zone-offset.ts, from
 * `tzOffset` of @date-fns/tz) rather than the `TZDate` field constructor:
 * TZDate picks the overlap instant via the host's own time zone (under TZ=UTC
 * it returns the later instant, under TZ=Europe/Berlin the earlier one), and
 * the answer must not depend on where the server runs.
 *
 * Output (`formatWithOffset`) is built from the UTC fields of the instant
 * shifted by the zone's offset, which zone-offset.ts computes once per zone
 * and day: formatting a list of slots asks the time-zone data a few times,
 * not once per string.
 */

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

const DATE_TIME_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

export const DATE_TIME_EXAMPLE = '2026-05-04T09:30';
const SHAPE_MESSAGE = `must be an ISO 8601 date-time such as ${DATE_TIME_EXAMPLE} or 2026-05-04T09:30:00+02:00`;

interface DateTimeFields {
  /** The written date and time as if it were UTC, in milliseconds. */
  wallMs: number;
  /** Offset east of UTC in minutes when the input carries one (`Z` is 0); undefined for a wall-clock time. */
  offsetMinutes: number | undefined;
}

/** Splits an ISO 8601 date-time into its wall time and offset; undefined when the shape or a field is out of range. */
function readDateTime(value: string): DateTimeFields | undefined {
  const match = DATE_TIME_PATTERN.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s = '0', fraction = '', zulu, sign, oh, om = '0'] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  // 24:00 and leap seconds are legal ISO 8601 but have no use here; refusing them keeps one spelling per instant.
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const wall = new Date(0);
  // setUTCFullYear, because Date.UTC maps years 0-99 to 1900-1999.
  wall.setUTCFullYear(year, month - 1, day);
  wall.setUTCHours(hour, minute, second, Number(fraction.padEnd(3, '0').slice(0, 3)));
  let offsetMinutes: number | undefined;
  if (zulu) offsetMinutes = 0;
  else if (sign) {
    if (Number(oh) > 23 || Number(om) > 59) return undefined;
    offsetMinutes = (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  }
  return { wallMs: wall.getTime(), offsetMinutes };
}

function daysInMonth(year: number, month: number): number {
  const probe = new Date(0);
  probe.setUTCFullYear(year, month, 0);
  return probe.getUTCDate();
}

/** Zones already checked: building an Intl formatter per call would dominate formatting a list of slots. */
const knownTimeZones = new Set<string>();

/**
 * Throws unless the runtime knows the zone. A provider's zone is validated
 * when it is stored, so a bad one here is our fault (500), not the caller's.
 */
export function requireTimeZone(timeZone: string): void {
  if (knownTimeZones.has(timeZone)) return;
  if (typeof timeZone !== 'string' || !isTimeZone(timeZone)) throw new DomainError('INTERNAL', `Unknown time zone: ${String(timeZone)}`);
  knownTimeZones.add(timeZone);
}

/**
 * The instant a wall-clock time denotes in a zone: gap → after the gap,
 * overlap → the earlier instant (see the module comment).
 */
export function wallTimeToInstant(wallMs: number, timeZone: string): Date {
  requireTimeZone(timeZone);
  // The offsets in force a day before and after: if they differ, a transition lies near this wall time.
  const offsetBefore = zoneOffsetMs(timeZone, wallMs - DAY_MS);
  const offsetAfter = zoneOffsetMs(timeZone, wallMs + DAY_MS);
  const candidates = [...new Set([offsetBefore, offsetAfter])]
    .map((offset) => wallMs - offset)
    .filter((instant) => instant + zoneOffsetMs(timeZone, instant) === wallMs);
  if (candidates.length) return new Date(Math.min(...candidates));
  // No instant shows this wall time: it lies in a gap. Read it with the offset before the gap.
  return new Date(wallMs - offsetBefore);
}

/**
 * Parses an input date-time: with offset or `Z` it is that instant; without,
 * a wall-clock time in `timeZone`. Bad input throws a 400 naming `field`.
 */
export function parseDateTimeInput(value: string, timeZone: string, field = 'dateTime'): Date {
  const text = typeof value === 'string' ? value.trim() : undefined;
  const fields = text === undefined ? undefined : readDateTime(text);
  if (!fields) {
    if (value === undefined || value === null) throw validationError(`${field} is required`);
    throw validationError(`${field} ${SHAPE_MESSAGE}, got ${describeValue(value)}`);
  }
  if (fields.offsetMinutes !== undefined) return new Date(fields.wallMs - fields.offsetMinutes * MINUTE_MS);
  return wallTimeToInstant(fields.wallMs, timeZone);
}

/** True when the text has a shape `parseDateTimeInput` accepts (with or without offset) and a real calendar date. */
export function isDateTimeInput(value: string): boolean {
  return readDateTime(value.trim()) !== undefined;
}

/**
 * A zod string that checks the date-time shape only. The zone is known after
 * the provider is loaded, so the service calls `parseDateTimeInput` afterwards.
 */
export const wallClockString = () => z.string().trim().refine(isDateTimeInput, SHAPE_MESSAGE);

/** `2026-05-04T09:30:00+02:00`: the instant as wall time in the zone with its offset, whole seconds (UTC shows `+00:00`). */
export function formatWithOffset(date: Date, timeZone: string): string {
  requireTimeZone(timeZone);
  const ms = wholeSecondMs(date);
  // Whole minutes: an offset with seconds (before 1893 in Berlin) is written, and applied, rounded to the minute.
  const offsetMinutes = Math.round(zoneOffsetMs(timeZone, ms) / MINUTE_MS);
  return isoFields(ms + offsetMinutes * MINUTE_MS) + offsetSuffix(offsetMinutes);
}

/** `2026-05-04T07:30:00Z`: the instant in UTC, whole seconds. */
export function formatUtc(date: Date): string {
  return `${isoFields(wholeSecondMs(date))}Z`;
}

function wholeSecondMs(date: Date): number {
  const ms = date instanceof Date ? date.getTime() : Number.NaN;
  if (Number.isNaN(ms)) throw new DomainError('INTERNAL', 'Cannot format an invalid date');
  // Floor, not round: 09:29:59.999 must not become 09:30:00, a later slot.
  return Math.floor(ms / 1000) * 1000;
}

/** `YYYY-MM-DD` per UTC day number, so a list of slots builds each date once. */
const dayTexts = new Map<number, string>();
const MAX_DAY_TEXTS = 10_000;
/** `00` … `59`. */
const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, '0'));

/** `YYYY-MM-DDThh:mm:ss` of the UTC fields of an instant given in whole seconds. */
function isoFields(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  let date = dayTexts.get(day);
  if (date === undefined) {
    const midnight = new Date(day * DAY_MS);
    date = `${pad(midnight.getUTCFullYear(), 4)}-${pad(midnight.getUTCMonth() + 1)}-${pad(midnight.getUTCDate())}`;
    if (dayTexts.size >= MAX_DAY_TEXTS) dayTexts.clear();
    dayTexts.set(day, date);
  }
  const seconds = (ms - day * DAY_MS) / 1000;
  return `${date}T${TWO_DIGITS[Math.floor(seconds / 3600)]}:${TWO_DIGITS[Math.floor(seconds / 60) % 60]}:${TWO_DIGITS[seconds % 60]}`;
}

const offsetSuffixes = new Map<number, string>();

/** `+02:00` for 120 minutes, `-02:30` for -150. */
function offsetSuffix(offsetMinutes: number): string {
  let suffix = offsetSuffixes.get(offsetMinutes);
  if (suffix === undefined) {
    const abs = Math.abs(offsetMinutes);
    suffix = `${offsetMinutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
    offsetSuffixes.set(offsetMinutes, suffix);
  }
  return suffix;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function describeValue(value: unknown): string {
  if (typeof value !== 'string') return typeof value;
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}
