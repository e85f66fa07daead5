import { TZDate } from '@date-fns/tz';
import { cutSlots } from '../timeslots/slot-grid.js';

export interface SeriesPlan {
  /** First occurrence's start and end: their wall-clock times are the daily window. */
  windowStart: Date;
  windowEnd: Date;
  /** The period the series covers. */
  rangeStart: Date;
  rangeEnd: Date;
  raster: number;
  /** ISO weekdays 1 (Monday) to 7 (Sunday); null for every day. */
  weekdays: number[] | null;
  timeZone: string;
}

/** Upper bound of appointments in one series, so one request cannot create millions of rows. */
export const SERIES_MAX_APPOINTMENTS = 2000;

/** Longest period one series may cover, so its days can be walked quickly whatever the input. */
export const SERIES_MAX_DAYS = 3660;

/** Length of the daily window in minutes (a window whose end lies before its start runs past midnight). */
function windowMinutes(plan: Pick<SeriesPlan, 'windowStart' | 'windowEnd' | 'timeZone'>): number {
  const from = new TZDate(plan.windowStart.getTime(), plan.timeZone);
  const to = new TZDate(plan.windowEnd.getTime(), plan.timeZone);
  const fromMinutes = from.getHours() * 60 + from.getMinutes();
  const toMinutes = to.getHours() * 60 + to.getMinutes();
  return toMinutes > fromMinutes ? toMinutes - fromMinutes : toMinutes + 24 * 60 - fromMinutes;
}

/**
 * Checks the size of a series in O(1), before it is expanded: the period
 * spans at most SERIES_MAX_DAYS days, the raster fits the daily window at
 * least on some day, and the days that surely lie inside the period do not
 * already hold more than SERIES_MAX_APPOINTMENTS. Returns the message of
 * the violated cap, or null. (A daylight-saving day is up to an hour longer
 * or shorter, hence the ±60 minutes.)
 */
export function seriesSizeProblem(plan: SeriesPlan): string | null {
  const days = Math.ceil((plan.rangeEnd.getTime() - plan.rangeStart.getTime()) / 86_400_000);
  if (days > SERIES_MAX_DAYS) return `series_data: a series may span at most ${SERIES_MAX_DAYS} days, got ${days}`;
  const window = windowMinutes(plan);
  if (Math.floor((window + 60) / plan.raster) === 0) {
    return `series_data.raster: ${plan.raster} minutes do not fit the daily window of ${window} minutes; the series yields no appointment`;
  }
  const perDayAtLeast = Math.max(0, Math.floor((window - 60) / plan.raster));
  const weekdays = plan.weekdays ? new Set(plan.weekdays).size : 7;
  const atLeast = Math.floor(Math.max(0, days - 2) / 7) * weekdays * perDayAtLeast;
  if (atLeast > SERIES_MAX_APPOINTMENTS) return `a series may hold at most ${SERIES_MAX_APPOINTMENTS} appointments (this one would hold at least ${atLeast})`;
  return null;
}

/**
 * The appointments of a series: on every local day of the range whose
 * weekday is listed, the daily window (in the provider's zone, so 09:00 stays
 * 09:00 across daylight-saving changes) cut into `raster`-minute slots; only
 * slots that lie wholly inside the range count.
 */
export function expandSeries(plan: SeriesPlan): { start: Date; end: Date }[] {
  const zone = plan.timeZone;
  const windowFrom = new TZDate(plan.windowStart.getTime(), zone);
  const windowTo = new TZDate(plan.windowEnd.getTime(), zone);
  const fromMinutes = windowFrom.getHours() * 60 + windowFrom.getMinutes();
  let toMinutes = windowTo.getHours() * 60 + windowTo.getMinutes();
  if (toMinutes <= fromMinutes) toMinutes += 24 * 60; // the window runs past midnight
  const rangeFirstDay = new TZDate(plan.rangeStart.getTime(), zone);
  const day = new TZDate(rangeFirstDay.getFullYear(), rangeFirstDay.getMonth(), rangeFirstDay.getDate(), zone);
  const result: { start: Date; end: Date }[] = [];
  while (day.getTime() < plan.rangeEnd.getTime()) {
    const isoWeekday = day.getDay() === 0 ? 7 : day.getDay();
    if (!plan.weekdays || plan.weekdays.includes(isoWeekday)) {
      const start = new TZDate(day.getFullYear(), day.getMonth(), day.getDate(), 0, fromMinutes, zone);
      const end = new TZDate(day.getFullYear(), day.getMonth(), day.getDate(), 0, toMinutes, zone);
      for (const slot of cutSlots({ start: new Date(start.getTime()), end: new Date(end.getTime()), raster: plan.raster })) {
        if (slot.start >= plan.rangeStart && slot.end <= plan.rangeEnd) result.push(slot);
        if (result.length > SERIES_MAX_APPOINTMENTS) return result;
      }
    }
    day.setDate(day.getDate() + 1);
  }
  return result;
}

/** True when the range covers more than one local day (then weekdays are required). */
export function spansSeveralDays(rangeStart: Date, rangeEnd: Date, timeZone: string): boolean {
  const first = new TZDate(rangeStart.getTime(), timeZone);
  const last = new TZDate(rangeEnd.getTime() - 1, timeZone);
  return first.getFullYear() !== last.getFullYear() || first.getMonth() !== last.getMonth() || first.getDate() !== last.getDate();
}
