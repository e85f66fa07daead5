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
