import { TZDate } from '@date-fns/tz';
import { format } from 'date-fns';
import { afterEach, describe, expect, it } from 'vitest';
import { de } from 'date-fns/locale/de';
import { deAT } from 'date-fns/locale/de-AT';
import { enGB } from 'date-fns/locale/en-GB';
import { enUS } from 'date-fns/locale/en-US';
import { fr } from 'date-fns/locale/fr';
import {
  compilePattern,
  DEFAULT_GROUP_FORMAT,
  DEFAULT_TIME_FORMAT,
  formatPattern,
  localeFor,
  MAX_PATTERN_LENGTH,
} from '../../services/booking/date-pattern.js';
import { DomainError } from '../../services/kernel/errors.js';

const BERLIN = 'Europe/Berlin';
/** Sunday 2026-03-29, 12:00 in Berlin (summer time has just begun). */
const SUNDAY_NOON = new Date('2026-03-29T10:00:00Z');

function validationMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('VALIDATION_FAILED');
    return (error as DomainError).message;
  }
  throw new Error('expected a validation error');
}

describe('defaults', () => {
  it('are the documented patterns', () => {
    expect(DEFAULT_GROUP_FORMAT).toBe('yyyy-MM-dd');
    expect(DEFAULT_TIME_FORMAT).toBe('yyyy-MM-dd HH:mm');
  });

  it('format a booking-flow slot in the provider zone', () => {
    const start = new Date('2026-05-04T07:30:00Z');
    expect(formatPattern(start, DEFAULT_GROUP_FORMAT, BERLIN)).toBe('2026-05-04');
    expect(formatPattern(start, DEFAULT_TIME_FORMAT, BERLIN)).toBe('2026-05-04 09:30');
  });
});

describe('pattern letters', () => {
  it.each([
    ['yyyy', '2026'],
    ['yy', '26'],
    ['MM', '03'],
    ['M', '3'],
    ['MMM', 'März'],
    ['MMMM', 'März'],
    ['dd', '29'],
    ['d', '29'],
    ['EEE', 'So.'],
    ['EEEE', 'Sonntag'],
    ['HH', '12'],
    ['mm', '00'],
    ['ss', '00'],
    ["HH:mm 'Uhr'", '12:00 Uhr'],
    ["EEEE, d. MMMM yyyy 'um' HH:mm 'Uhr'", 'Sonntag, 29. März 2026 um 12:00 Uhr'],
    ["'o''clock' HH", "o'clock 12"],
    ["''HH''", "'12'"],
    ['dd.MM.yyyy', '29.03.2026'],
    ['D', '88'],
    ['DDD', '088'],
    ['xxx', '+02:00'],
  ])('%s → %s (German)', (pattern, expected) => {
    expect(formatPattern(SUNDAY_NOON, pattern, BERLIN, 'de')).toBe(expected);
  });

  it('allows Y (week-based year) with its Unicode meaning, so weeks can be grouped', () => {
    // 2026-12-31 lies in ISO week 53 of 2026; 2027-01-01 too (German weeks are ISO weeks).
    expect(formatPattern(new Date('2026-12-31T10:00:00Z'), "YYYY-'W'ww", BERLIN, 'de')).toBe('2026-W53');
    expect(formatPattern(new Date('2027-01-01T10:00:00Z'), "YYYY-'W'ww", BERLIN, 'de')).toBe('2026-W53');
    expect(formatPattern(new Date('2027-01-01T10:00:00Z'), 'yyyy', BERLIN, 'de')).toBe('2027');
    expect(formatPattern(new Date('2026-01-05T10:00:00Z'), 'YY', BERLIN, 'de')).toBe('26');
  });

  it('gives a Java client using YYYY-MM-DD what Java gave it: the day of the year', () => {
    expect(formatPattern(SUNDAY_NOON, 'YYYY-MM-DD', BERLIN, 'de')).toBe('2026-03-88');
  });
});

describe('languages', () => {
  it.each([
    ['de', 'Sonntag, 29. März'],
    ['de-DE', 'Sonntag, 29. März'],
    ['de_DE', 'Sonntag, 29. März'],
    ['DE', 'Sonntag, 29. März'],
    ['de-CH', 'Sonntag, 29. März'],
    ['en', 'Sunday, 29. March'],
    ['en-US', 'Sunday, 29. March'],
    ['en-GB', 'Sunday, 29. March'],
    ['fr', 'dimanche, 29. mars'],
    ['fr-FR', 'dimanche, 29. mars'],
    ['fr-CH', 'dimanche, 29. mars'],
    ['it', 'domenica, 29. marzo'],
    ['it-CH', 'domenica, 29. marzo'],
    ['es', 'domingo, 29. marzo'],
    ['es-ES', 'domingo, 29. marzo'],
    ['nl', 'zondag, 29. maart'],
    ['nl-BE', 'zondag, 29. maart'],
  ])('%s → %s', (tag, expected) => {
    expect(formatPattern(SUNDAY_NOON, 'EEEE, d. MMMM', BERLIN, tag)).toBe(expected);
  });

  it('English short names', () => {
    expect(formatPattern(SUNDAY_NOON, 'EEE d MMM', BERLIN, 'en')).toBe('Sun 29 Mar');
  });

  it('Austrian German says Jänner', () => {
    expect(formatPattern(new Date('2026-01-05T10:00:00Z'), 'MMMM', BERLIN, 'de-AT')).toBe('Jänner');
    expect(formatPattern(new Date('2026-01-05T10:00:00Z'), 'MMMM', BERLIN, 'de-DE')).toBe('Januar');
  });

  it.each([[undefined], [null], [''], ['   '], ['xx'], ['zh-Hans-CN'], ['de--'], ['-'], ['../../etc']])(
    'falls back to German for %j',
    (tag) => {
      expect(formatPattern(SUNDAY_NOON, 'EEEE MMMM', BERLIN, tag)).toBe('Sonntag März');
    },
  );

  it('localeFor picks the most specific locale it knows', () => {
    expect(localeFor('de-AT')).toBe(deAT);
    expect(localeFor('de-AT-x-private')).toBe(deAT);
    expect(localeFor('de-LI')).toBe(de);
    expect(localeFor('en')).toBe(enUS);
    expect(localeFor('en-gb')).toBe(enGB);
    expect(localeFor('fr-BE')).toBe(fr);
    expect(localeFor(undefined)).toBe(de);
  });
});

describe('time zone', () => {
  it('groups by the provider day, not the UTC day, across midnight', () => {
    const lateUtc = new Date('2026-05-04T22:30:00Z');
    expect(formatPattern(lateUtc, DEFAULT_GROUP_FORMAT, BERLIN)).toBe('2026-05-05');
    expect(formatPattern(lateUtc, DEFAULT_TIME_FORMAT, BERLIN)).toBe('2026-05-05 00:30');
    expect(formatPattern(lateUtc, DEFAULT_GROUP_FORMAT, 'UTC')).toBe('2026-05-04');
    expect(formatPattern(lateUtc, 'EEEE', 'America/New_York', 'en')).toBe('Monday');
    expect(formatPattern(lateUtc, 'EEEE', BERLIN, 'en')).toBe('Tuesday');
  });

  it('crosses New Year in the zone', () => {
    expect(formatPattern(new Date('2026-12-31T23:30:00Z'), 'yyyy MMMM d', BERLIN, 'de')).toBe('2027 Januar 1');
  });

  it('spring forward: the hour after 01:59 is 03:00', () => {
    expect(formatPattern(new Date('2026-03-29T00:59:00Z'), 'HH:mm xxx', BERLIN)).toBe('01:59 +01:00');
    expect(formatPattern(new Date('2026-03-29T01:00:00Z'), 'HH:mm xxx', BERLIN)).toBe('03:00 +02:00');
  });

  it('fall back: 02:30 appears twice, with different offsets', () => {
    expect(formatPattern(new Date('2026-10-25T00:30:00Z'), DEFAULT_TIME_FORMAT, BERLIN)).toBe('2026-10-25 02:30');
    expect(formatPattern(new Date('2026-10-25T01:30:00Z'), DEFAULT_TIME_FORMAT, BERLIN)).toBe('2026-10-25 02:30');
    expect(formatPattern(new Date('2026-10-25T00:30:00Z'), 'HH:mm xxx', BERLIN)).toBe('02:30 +02:00');
    expect(formatPattern(new Date('2026-10-25T01:30:00Z'), 'HH:mm xxx', BERLIN)).toBe('02:30 +01:00');
  });

  it('every hour of the DST days lands on the right Berlin day', () => {
    for (let ms = Date.parse('2026-03-28T23:00:00Z'); ms < Date.parse('2026-03-29T22:00:00Z'); ms += 3_600_000) {
      expect(formatPattern(new Date(ms), DEFAULT_GROUP_FORMAT, BERLIN)).toBe('2026-03-29');
    }
    for (let ms = Date.parse('2026-10-24T22:00:00Z'); ms < Date.parse('2026-10-25T23:00:00Z'); ms += 3_600_000) {
      expect(formatPattern(new Date(ms), DEFAULT_GROUP_FORMAT, BERLIN)).toBe('2026-10-25');
    }
  });

  describe('does not depend on the time zone of the host', () => {
    const original = process.env.TZ;
    afterEach(() => {
      if (original === undefined) delete process.env.TZ;
      else process.env.TZ = original;
    });

    it.each(['UTC', 'America/Los_Angeles', 'Asia/Tokyo'])('host TZ=%s', (hostZone) => {
      process.env.TZ = hostZone;
      expect(formatPattern(new Date('2026-10-25T01:30:00Z'), 'EEEE HH:mm xxx', BERLIN)).toBe('Sonntag 02:30 +01:00');
      expect(formatPattern(new Date('2026-05-04T22:30:00Z'), DEFAULT_GROUP_FORMAT, BERLIN)).toBe('2026-05-05');
    });
  });

  it('an unknown provider zone is our fault (500), not a 400', () => {
    expect(() => formatPattern(SUNDAY_NOON, 'yyyy', 'Mars/Olympus')).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
  });
});

describe('bad patterns are 400s that name the parameter', () => {
  it.each([
    ['F', "groupFormat contains the unsupported pattern letter 'F'; put literal text in single quotes, e.g. 'Uhr'"],
    ['Z', "groupFormat contains the unsupported pattern letter 'Z'; put literal text in single quotes, e.g. 'Uhr'"],
    ['HH:mm Uhr', "groupFormat contains the unsupported pattern letter 'U'; put literal text in single quotes, e.g. 'Uhr'"],
    ['yyyy-MM-dd n', "groupFormat contains the unsupported pattern letter 'n'; put literal text in single quotes, e.g. 'Uhr'"],
    ['', 'groupFormat must not be empty'],
    ['y'.repeat(MAX_PATTERN_LENGTH + 1), `groupFormat must be at most ${MAX_PATTERN_LENGTH} characters`],
  ])('%j', (pattern, message) => {
    expect(validationMessage(() => formatPattern(SUNDAY_NOON, pattern, BERLIN, 'de', 'groupFormat'))).toBe(message);
  });

  it('uses the parameter name the caller passes', () => {
    expect(validationMessage(() => formatPattern(SUNDAY_NOON, 'j', BERLIN, 'en', 'timeFormat'))).toMatch(/^timeFormat /);
  });

  it.each([[42], [null], [undefined], [{}]])('a non-string pattern (%j) is a 400', (pattern) => {
    expect(validationMessage(() => formatPattern(SUNDAY_NOON, pattern as unknown as string, BERLIN, 'de', 'groupFormat'))).toBe(
      'groupFormat must be a string',
    );
  });

  it('accepts punctuation, non-Latin text and unterminated quotes as literal text', () => {
    expect(formatPattern(SUNDAY_NOON, 'dd/MM – HH:mm · ä ß 漢', BERLIN)).toBe('29/03 – 12:00 · ä ß 漢');
    expect(formatPattern(SUNDAY_NOON, "HH 'Uhr", BERLIN)).toBe('12 Uhr');
  });

  it('never throws anything but a DomainError for any pattern of Latin letters and symbols', () => {
    const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'-.:/ ";
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 2_000; i++) {
      const length = 1 + Math.floor(random() * 8);
      const pattern = Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      try {
        expect(typeof formatPattern(SUNDAY_NOON, pattern, BERLIN, 'fr', 'timeFormat')).toBe('string');
      } catch (error) {
        expect(error, pattern).toBeInstanceOf(DomainError);
        expect((error as DomainError).code).toBe('VALIDATION_FAILED');
        expect((error as DomainError).message).toMatch(/^timeFormat /);
      }
    }
  });
});

describe('compilePattern', () => {
  it('checks once and formats many instants', () => {
    const groupOf = compilePattern('EEEE d. MMMM', BERLIN, 'de', 'groupFormat');
    expect(groupOf(new Date('2026-03-28T12:00:00Z'))).toBe('Samstag 28. März');
    expect(groupOf(new Date('2026-03-29T12:00:00Z'))).toBe('Sonntag 29. März');
  });

  it('refuses a bad pattern before any date is formatted', () => {
    expect(() => compilePattern('Q-F', BERLIN, 'de', 'groupFormat')).toThrow("groupFormat contains the unsupported pattern letter 'F'");
  });

  it('an invalid date is an internal error', () => {
    expect(() => compilePattern('yyyy', BERLIN)(new Date(Number.NaN))).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
  });
});

describe('formatting without a time-zone lookup per value gives what date-fns gives on a TZDate', () => {
  const options = { locale: localeFor('de'), useAdditionalWeekYearTokens: true, useAdditionalDayOfYearTokens: true };
  const oracle = (ms: number, pattern: string, zone: string) => format(new TZDate(ms, zone), pattern, options);
  // Every pattern letter date-fns knows, in a few patterns (TZDate is slow: few long patterns, not many short ones).
  const PATTERNS = [
    "G GGGG y yy yyyy Y YY YYYY R RRRR u Q QQQ QQQQ q qqqq M MMM MMMM L LLLL 'lit''eral'",
    'w wo ww I Io II d do dd D DDD E EEEEE e eee c cccc i iii',
    'a b B h hh H HH K k kk m mm s ss S SSS X XX XXX XXXXX x xx xxx O OOOO z zzzz',
    't T P PP PPPP p pp Pp',
    // Numeric letters only: written without date-fns, so compared letter by letter here.
    "y yy yyy yyyy yyyyy M MM d dd ddd H HH HHH m mm s ss '' 'o''clock' -./:,",
    'yyyy-MM-dd HH:mm',
  ];
  const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'America/St_Johns', 'Asia/Kolkata'];

  it('every few hours around the daylight-saving changes', () => {
    for (const zone of ZONES.filter((zone) => zone !== 'Asia/Kolkata')) {
      const compiled = PATTERNS.map((pattern) => compilePattern(pattern, zone, 'de'));
      for (const day of ['2026-03-08', '2026-03-29', '2026-04-05', '2026-10-04', '2026-10-25', '2026-11-01']) {
        for (let ms = Date.parse(`${day}T00:00:00Z`) - 12 * 3_600_000; ms < Date.parse(`${day}T00:00:00Z`) + 36 * 3_600_000; ms += 3 * 3_600_000 + 60_000) {
          compiled.forEach((format, i) => expect(format(new Date(ms)), `${zone} ${new Date(ms).toISOString()}`).toBe(oracle(ms, PATTERNS[i]!, zone)));
        }
      }
    }
  });

  it('at random instants from 1910 to 2100', () => {
    let seed = 11;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const from = Date.parse('1910-01-01T00:00:00Z');
    const to = Date.parse('2100-01-01T00:00:00Z');
    for (const zone of ZONES) {
      const compiled = PATTERNS.map((pattern) => compilePattern(pattern, zone, 'de'));
      for (let i = 0; i < 80; i++) {
        const ms = Math.floor(from + random() * (to - from));
        compiled.forEach((format, j) => expect(format(new Date(ms)), `${zone} ${new Date(ms).toISOString()}`).toBe(oracle(ms, PATTERNS[j]!, zone)));
      }
    }
  });

  it('years before 1000 and before the common era, numeric letters as date-fns writes them', () => {
    const numeric = PATTERNS.at(-2)!;
    for (const iso of ['0999-12-31T23:59:59Z', '0050-06-15T12:00:00Z', '0000-03-01T08:07:06Z', '-000044-03-15T11:00:00Z']) {
      const ms = Date.parse(iso);
      expect(compilePattern(numeric, 'UTC', 'de')(new Date(ms)), iso).toBe(oracle(ms, numeric, 'UTC'));
    }
  });

  it('offsets with seconds (before 1893 in Berlin: +00:53:28): local fields, and day and week numbers, are exact', () => {
    // TZDate counts days with the offset cut to whole minutes and is a day off here in the morning (D 85, Y 1892).
    expect(formatPattern(new Date('1890-06-01T12:00:00Z'), 'yyyy-MM-dd HH:mm:ss xxx', BERLIN)).toBe('1890-06-01 12:53:28 +00:53');
    expect(formatPattern(new Date('1890-06-01T12:00:00Z'), 'yyyy-MM-dd HH:mm:ss', BERLIN)).toBe('1890-06-01 12:53:28');
    expect(formatPattern(new Date('1874-03-25T01:07:37Z'), 'D', 'Australia/Lord_Howe')).toBe('84');
    // Thursday 1891-12-31 lies in ISO week 53 of 1891.
    expect(formatPattern(new Date('1891-12-31T03:35:38Z'), "EEEE YYYY-'W'ww D", BERLIN)).toBe('Donnerstag 1891-W53 365');
  });

  it('a compiled pattern gives the same text when asked again (remembered per day or per instant)', () => {
    const groupOf = compilePattern('EEEE d. MMMM', BERLIN, 'de');
    const timeOf = compilePattern('HH:mm', BERLIN, 'de');
    for (let round = 0; round < 2; round++) {
      expect(groupOf(new Date('2026-03-28T23:30:00Z'))).toBe('Sonntag 29. März');
      expect(groupOf(new Date('2026-03-28T22:30:00Z'))).toBe('Samstag 28. März');
      expect(timeOf(new Date('2026-03-29T00:59:00Z'))).toBe('01:59');
      expect(timeOf(new Date('2026-03-29T01:00:00Z'))).toBe('03:00');
    }
  });
});
