import { TZDate } from '@date-fns/tz';
import { format, type FormatOptions, type Locale } from 'date-fns';
import { de } from 'date-fns/locale/de';
import { deAT } from 'date-fns/locale/de-AT';
import { enGB } from 'date-fns/locale/en-GB';
import { enUS } from 'date-fns/locale/en-US';
import { es } from 'date-fns/locale/es';
import { fr } from 'date-fns/locale/fr';
import { frCH } from 'date-fns/locale/fr-CH';
import { it } from 'date-fns/locale/it';
import { itCH } from 'date-fns/locale/it-CH';
import { nl } from 'date-fns/locale/nl';
import { nlBE } from 'date-fns/locale/nl-BE';
import { DomainError, validationError } from '../kernel/errors.js';
import { requireTimeZone } from '../kernel/wall-clock.js';
import { isRepeatedLocalTime, zoneOffsetMs } from '../kernel/zone-offset.js';
import { ZonedDate } from './zoned-date.js';

/**
 * Date patterns of the booking flow (`groupFormat`, `timeFormat`) with the
 * Java/Unicode letters clients of the legacy API use: yyyy, yy, MM, MMM, MMMM,
 * dd, d, EEE, EEEE, HH, mm, ss, literal text in single quotes ('' is a quote).
 *
 * Formatting is done by date-fns on a ZonedDate (zoned-date.ts): the fields
 * are those of the provider's zone at that instant, daylight saving
 * included, with the zone's offset looked up once per day (zone-offset.ts)
 * instead of once per value. Patterns of numeric letters only (the
 * defaults) are written straight from the local fields, as date-fns writes
 * them. A compiled pattern remembers what it formatted:
 * a pattern of date letters only is formatted once per local day, any other
 * once per instant (a slot's end is the next slot's start). Patterns with the
 * timestamp letters t/T (the instant itself) are formatted on a TZDate.
 *
 * Decisions:
 * - `Y` (week-based year) and `D` (day of year), which date-fns refuses by
 *   default, are allowed with their Unicode/Java meaning: Java formats them
 *   the same way, and `YYYY-'W'ww` is the correct pattern to group by week.
 *   A client that writes `YYYY-MM-DD` gets what Java gave it (day of year).
 * - Letters date-fns does not know (e.g. Java's `F`, `Z`, `n`) and an empty
 *   pattern are a 400 naming the parameter. Java's `Z` (+0200) is `xx` here.
 * - Time-zone names (`z`) come out as GMT offsets (`GMT+2`), not as `MESZ`.
 * - Language: the tag's region variant when date-fns has one (de-AT "Jänner"),
 *   else its language; unknown or absent → German, the default language of
 *   providers in this service.
 */

export const DEFAULT_GROUP_FORMAT = 'yyyy-MM-dd';
export const DEFAULT_TIME_FORMAT = 'yyyy-MM-dd HH:mm';
export const DEFAULT_LANGUAGE = 'de';
/** Long enough for any sensible pattern; keeps a request from making the service build huge strings per slot. */
export const MAX_PATTERN_LENGTH = 100;

const LOCALES: Readonly<Record<string, Locale>> = {
  de,
  'de-at': deAT,
  en: enUS,
  'en-us': enUS,
  'en-gb': enGB,
  fr,
  'fr-ch': frCH,
  it,
  'it-ch': itCH,
  es,
  nl,
  'nl-be': nlBE,
};

/** The date-fns locale for a language tag such as `de`, `de-DE`, `en_GB`; German when unknown or absent. */
export function localeFor(languageTag?: string | null): Locale {
  if (typeof languageTag === 'string') {
    const subtags = languageTag.trim().toLowerCase().replace(/_/g, '-').split('-');
    // Drop subtags from the end until a known locale remains: de-at-x-foo → de-at → de.
    for (let length = subtags.length; length > 0; length--) {
      const locale = LOCALES[subtags.slice(0, length).join('-')];
      if (locale) return locale;
    }
  }
  return LOCALES[DEFAULT_LANGUAGE]!;
}

/** A fixed instant to try a pattern on: date-fns errors depend on the pattern only, never on the date. */
const PROBE = new Date(Date.UTC(2026, 0, 1, 12));

/**
 * Checks a pattern once and returns a function that formats instants with it
 * in the zone and language; a bad pattern is a 400 naming `parameter`.
 */
export function compilePattern(
  pattern: string,
  timeZone: string,
  languageTag?: string | null,
  parameter = 'format',
): (date: Date) => string {
  if (typeof pattern !== 'string') throw validationError(`${parameter} must be a string`);
  if (pattern.length === 0) throw validationError(`${parameter} must not be empty`);
  if (pattern.length > MAX_PATTERN_LENGTH) throw validationError(`${parameter} must be at most ${MAX_PATTERN_LENGTH} characters`);
  requireTimeZone(timeZone);
  const options: FormatOptions = {
    locale: localeFor(languageTag),
    useAdditionalWeekYearTokens: true,
    useAdditionalDayOfYearTokens: true,
  };
  try {
    format(ZonedDate.at(PROBE.getTime(), timeZone), pattern, options);
  } catch (error) {
    throw validationError(describePatternError(error, parameter));
  }
  const letters = patternLetters(pattern);
  if (letters.has('t') || letters.has('T')) {
    return (date: Date) => format(new TZDate(validMs(date), timeZone), pattern, options);
  }
  const dateOnly = [...letters].every((letter) => DATE_LETTERS.has(letter));
  const numeric = options.locale!.localize.preprocessor ? null : numericFormatter(pattern);
  const memo = new Map<number, string>();
  return (date: Date) => {
    const ms = validMs(date);
    const offsetMs = zoneOffsetMs(timeZone, ms);
    // Date letters only: the text depends on the local day alone.
    const key = dateOnly ? Math.floor((ms + offsetMs) / DAY_MS) : ms;
    let text = memo.get(key);
    if (text === undefined) {
      text = numeric ? numeric(ms + offsetMs) : format(ZonedDate.at(ms, timeZone), pattern, options);
      if (memo.size >= MEMO_MAX) memo.clear();
      memo.set(key, text);
    }
    return text;
  };
}

const DAY_MS = 86_400_000;
/** Texts one compiled pattern remembers (a listing formats at most a few thousand instants). */
const MEMO_MAX = 20_000;
/** date-fns letters whose value depends on the local date only (P is the localized date). */
const DATE_LETTERS = new Set('GyYRuQqMLwIdDEeciP');
/** Tokens as date-fns reads them: a run of one letter, a quoted literal, or any other character. */
const TOKENS = /(\w)\1*|''|'(''|[^'])+('|$)|./g;

/** The pattern letters outside quoted literals. */
function patternLetters(pattern: string): Set<string> {
  const letters = new Set<string>();
  for (const [token] of pattern.matchAll(TOKENS)) {
    if (/^[A-Za-z]/.test(token)) letters.add(token[0]!);
  }
  return letters;
}

/** The local fields a numeric pattern needs, from an instant shifted by the zone's offset. */
interface LocalFields {
  year: number;
  month: number;
  day: number;
  hours: number;
  minutes: number;
  seconds: number;
}

type NumericPart = string | ((fields: LocalFields) => string);

/** date-fns' tokens: ordinals (`do`), runs of one letter, quoted literals, any other character. */
const FORMATTING_TOKENS = /[yYQqMLwIdDecihHKkms]o|(\w)\1*|''|'(''|[^'])+('|$)|./g;

/** date-fns' addLeadingZeros. */
const leadingZeros = (value: number, length: number) => (value < 0 ? '-' : '') + String(Math.abs(value)).padStart(length, '0');

/**
 * A formatter for the numeric letters most patterns use (y, M, MM, d, H, m,
 * s in any run length, literal text), writing exactly what date-fns writes
 * for them (its light formatters) from the shifted instant's UTC fields, so
 * the default patterns skip date-fns' per-call parsing. Null for a pattern
 * with any other letter: date-fns formats those.
 */
function numericFormatter(pattern: string): ((shiftedMs: number) => string) | null {
  const parts: NumericPart[] = [];
  for (const token of pattern.match(FORMATTING_TOKENS) ?? []) {
    if (token === "''") parts.push("'");
    else if (token[0] === "'") parts.push((/^'([^]*?)'?$/.exec(token)?.[1] ?? token).replace(/''/g, "'"));
    else if (!/^[A-Za-z]/.test(token)) parts.push(token);
    else {
      const part = numericPart(token);
      if (!part) return null;
      parts.push(part);
    }
  }
  return (shiftedMs) => {
    const fields = localFields(shiftedMs);
    let text = '';
    for (const part of parts) text += typeof part === 'string' ? part : part(fields);
    return text;
  };
}

function numericPart(token: string): ((fields: LocalFields) => string) | null {
  const length = token.length;
  switch (token[0]) {
    case 'y':
      if (token === 'yo') return null;
      // Era years, as date-fns: 1 BC (year 0) is 1.
      return (f) => {
        const year = f.year > 0 ? f.year : 1 - f.year;
        return leadingZeros(length === 2 ? year % 100 : year, length);
      };
    case 'M':
      if (length > 2) return null;
      return length === 1 ? (f) => String(f.month) : (f) => leadingZeros(f.month, 2);
    case 'd':
      return token === 'do' ? null : (f) => leadingZeros(f.day, length);
    case 'H':
      return token === 'Ho' ? null : (f) => leadingZeros(f.hours, length);
    case 'm':
      return token === 'mo' ? null : (f) => leadingZeros(f.minutes, length);
    case 's':
      return token === 'so' ? null : (f) => leadingZeros(f.seconds, length);
    default:
      return null;
  }
}

/** Year, month and day per day number since the epoch, so a list of slots computes each date once. */
const civilDays = new Map<number, [number, number, number]>();

function localFields(shiftedMs: number): LocalFields {
  const dayNumber = Math.floor(shiftedMs / DAY_MS);
  let civil = civilDays.get(dayNumber);
  if (!civil) {
    const midnight = new Date(dayNumber * DAY_MS);
    civil = [midnight.getUTCFullYear(), midnight.getUTCMonth() + 1, midnight.getUTCDate()];
    if (civilDays.size >= MEMO_MAX) civilDays.clear();
    civilDays.set(dayNumber, civil);
  }
  const secondsOfDay = Math.floor((shiftedMs - dayNumber * DAY_MS) / 1000);
  return {
    year: civil[0],
    month: civil[1],
    day: civil[2],
    hours: Math.floor(secondsOfDay / 3600),
    minutes: Math.floor(secondsOfDay / 60) % 60,
    seconds: secondsOfDay % 60,
  };
}

function validMs(date: Date): number {
  const ms = date instanceof Date ? date.getTime() : Number.NaN;
  if (Number.isNaN(ms)) throw new DomainError('INTERNAL', 'Cannot format an invalid date');
  return ms;
}

/**
 * Formats an instant with a Java/Unicode date pattern in the provider's zone
 * and the language of `languageTag`; a bad pattern is a 400 naming `parameter`.
 */
export function formatPattern(date: Date, pattern: string, timeZone: string, languageTag?: string | null, parameter = 'format'): string {
  return compilePattern(pattern, timeZone, languageTag, parameter)(date);
}

/**
 * A time in the zone by the pattern (as formatPattern); in the hour repeated when
 * clocks go back, followed by its offset ("02:30 Uhr (GMT+1)"), which alone
 * tells the two occurrences apart.
 */
export function formatZoned(date: Date, pattern: string, timeZone: string, language: string): string {
  return formatPattern(date, isRepeatedLocalTime(timeZone, date.getTime()) ? `${pattern} (O)` : pattern, timeZone, language);
}

function describePatternError(error: unknown, parameter: string): string {
  const message = error instanceof Error ? error.message : '';
  const letter = /unescaped latin alphabet character `(.)`/.exec(message)?.[1];
  if (letter) {
    return `${parameter} contains the unsupported pattern letter '${letter}'; put literal text in single quotes, e.g. 'Uhr'`;
  }
  return `${parameter} is not a valid date pattern`;
}
