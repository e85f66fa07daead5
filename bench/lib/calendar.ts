/** Dates in the provider's zone (the bench provider keeps the default, Europe/Berlin). */
export const PROVIDER_ZONE = 'Europe/Berlin';

/** Today's date in the zone, as YYYY-MM-DD. */
export function todayIn(zone: string, now = new Date()): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

/** YYYY-MM-DD plus `days` (calendar arithmetic, no zone involved). */
export function addDays(day: string, days: number): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

export interface Slot {
  resourceId: string;
  timeslotId: string;
  productId: string;
  /** ISO 8601 UTC */
  start: string;
  end: string;
}

/** The slots of a timeslot's grid: `raster` minutes each, counted in elapsed time from its start. */
export function gridOf(timeslot: { uuid: string; start: string; end: string; raster: number }, resourceId: string, productId: string): Slot[] {
  const slots: Slot[] = [];
  const end = Date.parse(timeslot.end);
  const step = timeslot.raster * 60_000;
  for (let at = Date.parse(timeslot.start); at + step <= end; at += step) {
    slots.push({ resourceId, timeslotId: timeslot.uuid, productId, start: new Date(at).toISOString(), end: new Date(at + step).toISOString() });
  }
  return slots;
}
