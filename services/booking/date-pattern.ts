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

/**
 * Date patterns of the booking flow (`groupFormat`, `timeFormat`) with the
 * Java/Unicode letters clients of the legacy API use: yyyy, yy, MM, MMM, MMMM,
 * dd, d, EEE, EEEE, HH, mm, ss, literal text in single quotes ('' is a quote).
 *
 * Formatting is done by date-fns on a TZDate, so the fields are those of the
 * provider's zone at that instant, daylight saving included.
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
    format(new TZDate(PROBE.getTime(), timeZone), pattern, options);
  } catch (error) {
    throw validationError(describePatternError(error, parameter));
  }
  return (date: Date) => {
    const ms = date instanceof Date ? date.getTime() : Number.NaN;
    if (Number.isNaN(ms)) throw new DomainError('INTERNAL', 'Cannot format an invalid date');
    return format(new TZDate(ms, timeZone), pattern, options);
  };
}

/**
 * Formats an instant with a Java/Unicode date pattern in the provider's zone
 * and the language of `languageTag`; a bad pattern is a 400 naming `parameter`.
 */
export function formatPattern(date: Date, pattern: string, timeZone: string, languageTag?: string | null, parameter = 'format'): string {
  return compilePattern(pattern, timeZone, languageTag, parameter)(date);
}

function describePatternError(error: unknown, parameter: string): string {
  const message = error instanceof Error ? error.message : '';
  const letter = /unescaped latin alphabet character `(.)`/.exec(message)?.[1];
  if (letter) {
    return `${parameter} contains the unsupported pattern letter '${letter}'; put literal text in single quotes, e.g. 'Uhr'`;
  }
  return `${parameter} is not a valid date pattern`;
}
