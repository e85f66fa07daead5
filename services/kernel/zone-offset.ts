import { tzOffset } from '@date-fns/tz';

/**
 * The offset of an IANA zone at an instant, asked of the runtime's time-zone
 * data once per zone and UTC day instead of once per value.
 *
 * Offsets are constant between transitions. For each (zone, UTC day) the
 * offsets at the first and the last millisecond of the day are looked up;
 * when they are equal the day has no transition and that offset holds for
 * all of it. When they differ, the instant of the transition is found by
 * binary search (about 27 look-ups, once per transition day) and cached
 * with the offsets before and after it.
 *
 * Assumption: a zone changes its offset at most once within one UTC day.
 * No zone of the IANA database has two changes less than a day apart in
 * the years a booking can name; should one appear, the second change of
 * that day would be seen at the day's end instead of its instant.
 *
 * Offsets are in whole milliseconds east of UTC; historical offsets can
 * carry seconds (Europe/Berlin before 1893: +00:53:28).
 */

const DAY_MS = 86_400_000;
/** Days remembered per zone before the zone's table is emptied (a listing needs a few hundred). */
const MAX_DAYS_PER_ZONE = 20_000;

interface DayOffsets {
  /** The first instant of the day with the `after` offset (the day's start when it has no transition). */
  transitionMs: number;
  before: number;
  after: number;
}

const zones = new Map<string, Map<number, DayOffsets>>();

/** Offset of the zone at the instant, straight from the runtime's time-zone data (the slow path). */
export function exactOffsetMs(timeZone: string, instantMs: number): number {
  return Math.round(tzOffset(timeZone, new Date(instantMs)) * 60) * 1000;
}

/** Offset of the zone at the instant in milliseconds, from the per-day cache. */
export function zoneOffsetMs(timeZone: string, instantMs: number): number {
  const day = Math.floor(instantMs / DAY_MS);
  let days = zones.get(timeZone);
  if (!days) zones.set(timeZone, (days = new Map()));
  let offsets = days.get(day);
  if (!offsets) {
    offsets = offsetsOfDay(timeZone, day);
    if (days.size >= MAX_DAYS_PER_ZONE) days.clear();
    days.set(day, offsets);
  }
  return instantMs < offsets.transitionMs ? offsets.before : offsets.after;
}

function offsetsOfDay(timeZone: string, day: number): DayOffsets {
  const first = day * DAY_MS;
  const last = first + DAY_MS - 1;
  const before = exactOffsetMs(timeZone, first);
  const after = exactOffsetMs(timeZone, last);
  if (before === after) return { transitionMs: first, before, after };
  // Invariant: the offset at `low` is `before`, the one at `high` is not.
  let low = first;
  let high = last;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (exactOffsetMs(timeZone, middle) === before) low = middle;
    else high = middle;
  }
  return { transitionMs: high, before, after };
}

/** The transition of the zone on the UTC day of the instant, as the cache holds it; null when that day has none. */
export function transitionOnDay(timeZone: string, instantMs: number): { atMs: number; before: number; after: number } | null {
  zoneOffsetMs(timeZone, instantMs);
  const offsets = zones.get(timeZone)!.get(Math.floor(instantMs / DAY_MS))!;
  return offsets.before === offsets.after ? null : { atMs: offsets.transitionMs, before: offsets.before, after: offsets.after };
}

/**
 * True when the zone's wall-clock time at the instant is shown twice, as in
 * the hour repeated when clocks go back (Europe/Berlin, 2027-10-31: 02:00 to
 * 03:00 local happens at +02:00 and again at +01:00). Such a time alone does
 * not say which of the two is meant: mails add the offset to it, and
 * calendar invites name the instant in UTC (RFC 5545 reads a repeated local
 * time as its first occurrence).
 */
export function isRepeatedLocalTime(timeZone: string, instantMs: number): boolean {
  const local = instantMs + zoneOffsetMs(timeZone, instantMs);
  // The other instant with this local time, if any, has the offset of the other side of a transition near it.
  for (const otherOffset of [zoneOffsetMs(timeZone, instantMs - DAY_MS), zoneOffsetMs(timeZone, instantMs + DAY_MS)]) {
    const other = local - otherOffset;
    if (other !== instantMs && other + zoneOffsetMs(timeZone, other) === local) return true;
  }
  return false;
}
