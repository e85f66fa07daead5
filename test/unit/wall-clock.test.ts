import { afterEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../services/kernel/errors.js';
import { parseInput } from '../../services/kernel/validation.js';
import {
  formatUtc,
  formatWithOffset,
  isDateTimeInput,
  parseDateTimeInput,
  wallClockString,
} from '../../services/kernel/wall-clock.js';
import { z } from 'zod';

const BERLIN = 'Europe/Berlin';
const iso = (date: Date) => date.toISOString();

function validationMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('VALIDATION_FAILED');
    expect((error as DomainError).status).toBe(400);
    return (error as DomainError).message;
  }
  throw new Error('expected a validation error');
}

describe('parseDateTimeInput: instants', () => {
  it.each([
    ['2026-05-04T07:30:00Z', '2026-05-04T07:30:00.000Z'],
    ['2026-05-04T07:30Z', '2026-05-04T07:30:00.000Z'],
    ['2026-05-04T07:30:00.123Z', '2026-05-04T07:30:00.123Z'],
    ['2026-05-04T07:30:00.123456789Z', '2026-05-04T07:30:00.123Z'],
    ['2026-05-04t07:30:00z', '2026-05-04T07:30:00.000Z'],
    ['2026-05-04T09:30:00+02:00', '2026-05-04T07:30:00.000Z'],
    ['2026-05-04T09:30+0200', '2026-05-04T07:30:00.000Z'],
    ['2026-05-04T09:30+02', '2026-05-04T07:30:00.000Z'],
    ['2026-05-04T02:00:00-05:30', '2026-05-04T07:30:00.000Z'],
    ['2026-05-04T07:30:00+00:00', '2026-05-04T07:30:00.000Z'],
    ['  2026-05-04T07:30:00Z  ', '2026-05-04T07:30:00.000Z'],
  ])('%s is the instant %s whatever the zone', (input, expected) => {
    expect(iso(parseDateTimeInput(input, BERLIN, 'start'))).toBe(expected);
    expect(iso(parseDateTimeInput(input, 'America/New_York', 'start'))).toBe(expected);
  });

  it('an explicit offset wins over the zone even inside a Berlin DST gap', () => {
    expect(iso(parseDateTimeInput('2026-03-29T02:30:00+01:00', BERLIN))).toBe('2026-03-29T01:30:00.000Z');
  });
});

describe('parseDateTimeInput: wall-clock times in the zone', () => {
  it.each([
    ['2026-05-04T09:30', BERLIN, '2026-05-04T07:30:00.000Z'],
    ['2026-05-04T09:30:15', BERLIN, '2026-05-04T07:30:15.000Z'],
    ['2026-01-15T09:30', BERLIN, '2026-01-15T08:30:00.000Z'],
    ['2026-12-31T23:59:59', BERLIN, '2026-12-31T22:59:59.000Z'],
    ['2026-01-01T00:00', BERLIN, '2025-12-31T23:00:00.000Z'],
    ['2026-05-04T09:30', 'UTC', '2026-05-04T09:30:00.000Z'],
    ['2026-05-04T09:30', 'America/New_York', '2026-05-04T13:30:00.000Z'],
    ['2026-05-04T09:30', 'Asia/Kolkata', '2026-05-04T04:00:00.000Z'],
    ['2026-05-04T09:30', 'Europe/Zurich', '2026-05-04T07:30:00.000Z'],
    ['2028-02-29T12:00', BERLIN, '2028-02-29T11:00:00.000Z'],
  ])('%s in %s is %s', (input, zone, expected) => {
    expect(iso(parseDateTimeInput(input, zone, 'start'))).toBe(expected);
  });

  describe('spring forward, Europe/Berlin 2026-03-29 02:00 → 03:00', () => {
    it.each([
      ['2026-03-29T01:59', '2026-03-29T00:59:00.000Z'],
      // The gap: 02:00–02:59 do not exist; they resolve one hour later (after the gap).
      ['2026-03-29T02:00', '2026-03-29T01:00:00.000Z'],
      ['2026-03-29T02:30', '2026-03-29T01:30:00.000Z'],
      ['2026-03-29T02:59:59', '2026-03-29T01:59:59.000Z'],
      ['2026-03-29T03:00', '2026-03-29T01:00:00.000Z'],
      ['2026-03-29T03:30', '2026-03-29T01:30:00.000Z'],
    ])('%s → %s', (input, expected) => {
      expect(iso(parseDateTimeInput(input, BERLIN))).toBe(expected);
    });

    it('a time in the gap reads as 03:30 summer time', () => {
      expect(formatWithOffset(parseDateTimeInput('2026-03-29T02:30', BERLIN), BERLIN)).toBe('2026-03-29T03:30:00+02:00');
    });
  });

  describe('fall back, Europe/Berlin 2026-10-25 03:00 → 02:00', () => {
    it.each([
      ['2026-10-25T01:59', '2026-10-24T23:59:00.000Z'],
      // Ambiguous 02:00–02:59: the earlier (summer-time, +02:00) instant.
      ['2026-10-25T02:00', '2026-10-25T00:00:00.000Z'],
      ['2026-10-25T02:30', '2026-10-25T00:30:00.000Z'],
      ['2026-10-25T02:59:59', '2026-10-25T00:59:59.000Z'],
      ['2026-10-25T03:00', '2026-10-25T02:00:00.000Z'],
    ])('%s → %s', (input, expected) => {
      expect(iso(parseDateTimeInput(input, BERLIN))).toBe(expected);
    });

    it('the second 02:30 (winter time) can be given with its offset', () => {
      expect(iso(parseDateTimeInput('2026-10-25T02:30+01:00', BERLIN))).toBe('2026-10-25T01:30:00.000Z');
    });
  });

  it('resolves gaps and overlaps in other zones by the same rule', () => {
    // New York: spring forward 2026-03-08 02:00 → 03:00, fall back 2026-11-01 02:00 → 01:00.
    expect(formatWithOffset(parseDateTimeInput('2026-03-08T02:30', 'America/New_York'), 'America/New_York')).toBe('2026-03-08T03:30:00-04:00');
    expect(formatWithOffset(parseDateTimeInput('2026-11-01T01:30', 'America/New_York'), 'America/New_York')).toBe('2026-11-01T01:30:00-04:00');
    // Lord Howe shifts by 30 minutes: 2026-10-04 02:00 → 02:30, 2026-04-05 02:00 → 01:30.
    expect(formatWithOffset(parseDateTimeInput('2026-10-04T02:15', 'Australia/Lord_Howe'), 'Australia/Lord_Howe')).toBe('2026-10-04T02:45:00+11:00');
    expect(formatWithOffset(parseDateTimeInput('2026-04-05T01:45', 'Australia/Lord_Howe'), 'Australia/Lord_Howe')).toBe('2026-04-05T01:45:00+11:00');
  });

  describe('does not depend on the time zone of the host', () => {
    const original = process.env.TZ;
    afterEach(() => {
      if (original === undefined) delete process.env.TZ;
      else process.env.TZ = original;
    });

    it.each(['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe'])('host TZ=%s', (hostZone) => {
      process.env.TZ = hostZone;
      expect(iso(parseDateTimeInput('2026-10-25T02:30', BERLIN))).toBe('2026-10-25T00:30:00.000Z');
      expect(iso(parseDateTimeInput('2026-03-29T02:30', BERLIN))).toBe('2026-03-29T01:30:00.000Z');
      expect(iso(parseDateTimeInput('2026-11-01T01:30', 'America/New_York'))).toBe('2026-11-01T05:30:00.000Z');
      expect(formatWithOffset(new Date('2026-10-25T01:30:00Z'), BERLIN)).toBe('2026-10-25T02:30:00+01:00');
    });
  });
});

describe('parseDateTimeInput: invalid input', () => {
  it.each([
    '',
    '   ',
    'tomorrow',
    '2026-05-04',
    '2026-05-04 09:30',
    '2026-05-04T9:30',
    '2026-5-4T09:30',
    '26-05-04T09:30',
    '2026-05-04T09',
    '2026-05-04T09:30:5',
    '2026-13-01T09:30',
    '2026-00-10T09:30',
    '2026-02-29T09:30',
    '2026-04-31T09:30',
    '2026-05-00T09:30',
    '2026-05-04T24:00',
    '2026-05-04T23:60',
    '2026-05-04T23:59:60',
    '2026-05-04T09:30+24:00',
    '2026-05-04T09:30+02:60',
    '2026-05-04T09:30+2',
    '2026-05-04T09:30:00.Z',
    '2026-05-04T09:30:00.1234567890Z',
    '2026-05-04T09:30ZZ',
    '2026-05-04T09:30:00 +02:00',
    '+2026-05-04T09:30',
    '２０２６-05-04T09:30',
    '2026-05-04T09:30\nX',
    '2026-05-04T09:30:00+02:00:00',
  ])('%j is a 400 naming the field', (input) => {
    const message = validationMessage(() => parseDateTimeInput(input, BERLIN, 'start'));
    expect(message).toMatch(/^start must be an ISO 8601 date-time such as 2026-05-04T09:30/);
    expect(message.length).toBeLessThan(200);
  });

  it('a very long value is a 400 that quotes only its beginning', () => {
    const message = validationMessage(() => parseDateTimeInput('9'.repeat(10_000), BERLIN, 'start'));
    expect(message.length).toBeLessThan(200);
  });

  it('surrounding white space is ignored', () => {
    expect(iso(parseDateTimeInput('\t2026-05-04T09:30\n', BERLIN))).toBe('2026-05-04T07:30:00.000Z');
  });

  it.each([[undefined], [null]])('%s is "required"', (input) => {
    expect(validationMessage(() => parseDateTimeInput(input as unknown as string, BERLIN, 'end'))).toBe('end is required');
  });

  it.each([[42], [{}], [[]], [true], [new Date()]])('a non-string (%j) is a 400, not a crash', (input) => {
    expect(validationMessage(() => parseDateTimeInput(input as unknown as string, BERLIN, 'from'))).toMatch(/^from must be an ISO 8601/);
  });

  it('an unknown zone for a wall-clock time is our fault (500), not the caller’s', () => {
    expect(() => parseDateTimeInput('2026-05-04T09:30', 'Mars/Olympus')).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
  });
});

describe('wallClockString', () => {
  const schema = z.object({ start: wallClockString() });

  it('accepts both shapes and trims', () => {
    expect(parseInput(schema, { start: ' 2026-05-04T09:30 ' })).toEqual({ start: '2026-05-04T09:30' });
    expect(parseInput(schema, { start: '2026-05-04T09:30:00+02:00' }).start).toBe('2026-05-04T09:30:00+02:00');
  });

  it('names the field in its message', () => {
    expect(validationMessage(() => parseInput(schema, { start: '2026-02-30T10:00' }))).toBe(
      'start must be an ISO 8601 date-time such as 2026-05-04T09:30 or 2026-05-04T09:30:00+02:00',
    );
    expect(validationMessage(() => parseInput(schema, { start: 5 }))).toBe('start must be a string, got number');
    expect(validationMessage(() => parseInput(schema, {}))).toBe('start is required');
  });

  it('agrees with isDateTimeInput', () => {
    expect(isDateTimeInput('2026-05-04T09:30')).toBe(true);
    expect(isDateTimeInput('2026-05-04')).toBe(false);
  });
});

describe('formatWithOffset and formatUtc', () => {
  it.each([
    ['2026-05-04T07:30:00Z', BERLIN, '2026-05-04T09:30:00+02:00'],
    ['2026-01-15T08:30:00Z', BERLIN, '2026-01-15T09:30:00+01:00'],
    ['2026-05-04T07:30:00Z', 'UTC', '2026-05-04T07:30:00+00:00'],
    ['2026-05-04T07:30:00Z', 'America/New_York', '2026-05-04T03:30:00-04:00'],
    ['2026-05-04T07:30:00Z', 'Asia/Kolkata', '2026-05-04T13:00:00+05:30'],
    ['2026-05-04T07:30:00Z', 'America/St_Johns', '2026-05-04T05:00:00-02:30'],
    ['2026-12-31T23:30:00Z', BERLIN, '2027-01-01T00:30:00+01:00'],
    ['2026-03-29T00:59:59Z', BERLIN, '2026-03-29T01:59:59+01:00'],
    ['2026-03-29T01:00:00Z', BERLIN, '2026-03-29T03:00:00+02:00'],
    ['2026-10-25T00:30:00Z', BERLIN, '2026-10-25T02:30:00+02:00'],
    ['2026-10-25T01:30:00Z', BERLIN, '2026-10-25T02:30:00+01:00'],
  ])('%s in %s → %s', (instant, zone, expected) => {
    expect(formatWithOffset(new Date(instant), zone)).toBe(expected);
  });

  it('drops milliseconds by truncation, never rounding into the next second', () => {
    expect(formatWithOffset(new Date('2026-05-04T07:29:59.999Z'), BERLIN)).toBe('2026-05-04T09:29:59+02:00');
    expect(formatUtc(new Date('2026-05-04T07:29:59.999Z'))).toBe('2026-05-04T07:29:59Z');
  });

  it('formatUtc gives Z and no milliseconds', () => {
    expect(formatUtc(new Date('2026-05-04T07:30:00.000Z'))).toBe('2026-05-04T07:30:00Z');
    expect(formatUtc(new Date('0999-01-02T03:04:05Z'))).toBe('0999-01-02T03:04:05Z');
  });

  it('round-trips through parseDateTimeInput, across both Berlin changes', () => {
    for (let ms = Date.parse('2026-03-28T20:00:00Z'); ms <= Date.parse('2026-03-29T06:00:00Z'); ms += 15 * 60_000) {
      const text = formatWithOffset(new Date(ms), BERLIN);
      expect(parseDateTimeInput(text, 'UTC').getTime()).toBe(ms);
    }
    for (let ms = Date.parse('2026-10-24T20:00:00Z'); ms <= Date.parse('2026-10-25T06:00:00Z'); ms += 15 * 60_000) {
      expect(parseDateTimeInput(formatWithOffset(new Date(ms), BERLIN), 'UTC').getTime()).toBe(ms);
      expect(parseDateTimeInput(formatUtc(new Date(ms)), BERLIN).getTime()).toBe(ms);
    }
  });

  it('every wall time that exists once in Berlin round-trips through the zone', () => {
    for (let ms = Date.parse('2026-01-01T00:00:00Z'); ms < Date.parse('2027-01-01T00:00:00Z'); ms += 37 * 60_000 * 7) {
      const instant = new Date(ms);
      const wall = formatWithOffset(instant, BERLIN).slice(0, 19);
      const inAmbiguousHour = wall.startsWith('2026-10-25T02:');
      if (!inAmbiguousHour) expect(parseDateTimeInput(wall, BERLIN).getTime()).toBe(ms);
    }
  });

  it('far in the past: an offset with seconds is written and applied rounded to the minute', () => {
    // Berlin kept local mean time (+00:53:28) until 1893-04-01 00:00 local (1893-03-31T23:06:32Z).
    expect(formatWithOffset(new Date('1890-06-01T12:00:00Z'), BERLIN)).toBe('1890-06-01T12:53:00+00:53');
    expect(formatWithOffset(new Date('1893-03-31T23:06:31Z'), BERLIN)).toBe('1893-03-31T23:59:31+00:53');
    expect(formatWithOffset(new Date('1893-03-31T23:06:32Z'), BERLIN)).toBe('1893-04-01T00:06:32+01:00');
    expect(formatWithOffset(new Date('1850-01-01T00:00:00Z'), 'America/New_York')).toBe('1849-12-31T19:04:00-04:56');
  });

  it('every 7 minutes across both Berlin changes and the Lord Howe half-hour changes, as the offsets in force', () => {
    const cases = [
      [BERLIN, '2026-03-29T00:00:00Z', '2026-03-29T01:00:00Z', '+01:00', '+02:00'],
      [BERLIN, '2026-10-25T00:00:00Z', '2026-10-25T01:00:00Z', '+02:00', '+01:00'],
      ['Australia/Lord_Howe', '2026-10-03T14:30:00Z', '2026-10-03T15:30:00Z', '+10:30', '+11:00'],
      ['Australia/Lord_Howe', '2026-04-04T14:00:00Z', '2026-04-04T15:00:00Z', '+11:00', '+10:30'],
    ] as const;
    for (const [zone, from, change, before, after] of cases) {
      for (let ms = Date.parse(from); ms < Date.parse(from) + 2 * 3_600_000; ms += 7 * 60_000) {
        const text = formatWithOffset(new Date(ms), zone);
        expect(text.slice(19), `${zone} ${new Date(ms).toISOString()}`).toBe(ms < Date.parse(change) ? before : after);
        expect(parseDateTimeInput(text, 'UTC').getTime()).toBe(ms);
      }
    }
  });

  it('refuses invalid dates and unknown zones as internal errors', () => {
    expect(() => formatUtc(new Date(Number.NaN))).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
    expect(() => formatWithOffset(new Date(), 'Nowhere/Town')).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
  });
});
