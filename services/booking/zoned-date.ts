import { zoneOffsetMs } from '../kernel/zone-offset.js';

/**
 * A Date for date-fns `format` whose local fields are the wall-clock fields
 * of a zone at an instant, with no time-zone lookup per field.
 *
 * It holds the instant shifted by the zone's offset, and its local getters
 * and setters are the UTC ones of that shifted value: `getHours()` of 07:30Z
 * in Europe/Berlin in May is 9. `getTimezoneOffset()` is the zone's offset at
 * the instant (minutes west of UTC, truncated like TZDate's), which only the
 * offset letters (x, X, O, z) read. date-fns does its calendar arithmetic
 * (day of year, week numbers) through these getters and setters and `+date`,
 * so it all happens on the shifted, uniform timeline and is exact.
 *
 * date-fns clones a date with `new date.constructor(value)`: from another
 * ZonedDate the shifted value and the offset are copied; from a number the
 * number is taken as a shifted value (date-fns builds helper dates such as
 * "January 4th of next year" that way and only reads their fields).
 *
 * `+date` is the shifted value, not the instant: patterns with the timestamp
 * letters t and T must not be formatted with it (date-pattern.ts does not).
 */
export class ZonedDate extends Date {
  /** Minutes west of UTC, as Date#getTimezoneOffset answers. */
  readonly offsetMinutesWest: number;

  constructor(value?: number | Date, offsetMinutesWest?: number) {
    if (value === undefined) super();
    else super(value instanceof Date ? value.getTime() : value);
    this.offsetMinutesWest = offsetMinutesWest ?? (value instanceof ZonedDate ? value.offsetMinutesWest : 0);
  }

  /** The wall-clock fields of `timeZone` at the instant. */
  static at(instantMs: number, timeZone: string): ZonedDate {
    const offsetMs = zoneOffsetMs(timeZone, instantMs);
    return new ZonedDate(instantMs + offsetMs, Math.trunc(-offsetMs / 60_000));
  }

  override getTimezoneOffset(): number {
    return this.offsetMinutesWest;
  }

  override getFullYear(): number {
    return this.getUTCFullYear();
  }
  override getMonth(): number {
    return this.getUTCMonth();
  }
  override getDate(): number {
    return this.getUTCDate();
  }
  override getDay(): number {
    return this.getUTCDay();
  }
  override getHours(): number {
    return this.getUTCHours();
  }
  override getMinutes(): number {
    return this.getUTCMinutes();
  }
  override getSeconds(): number {
    return this.getUTCSeconds();
  }
  override getMilliseconds(): number {
    return this.getUTCMilliseconds();
  }

  // Rest parameters pass on exactly the arguments given: an explicit undefined would make the result NaN.
  override setFullYear(...args: [number, number?, number?]): number {
    return this.setUTCFullYear(...(args as [number]));
  }
  override setMonth(...args: [number, number?]): number {
    return this.setUTCMonth(...(args as [number]));
  }
  override setDate(date: number): number {
    return this.setUTCDate(date);
  }
  override setHours(...args: [number, number?, number?, number?]): number {
    return this.setUTCHours(...(args as [number]));
  }
  override setMinutes(...args: [number, number?, number?]): number {
    return this.setUTCMinutes(...(args as [number]));
  }
  override setSeconds(...args: [number, number?]): number {
    return this.setUTCSeconds(...(args as [number]));
  }
  override setMilliseconds(ms: number): number {
    return this.setUTCMilliseconds(ms);
  }
}
