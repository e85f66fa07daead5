import { describe, expect, it } from 'vitest';
import { exactOffsetMs, isRepeatedLocalTime, transitionOnDay, zoneOffsetMs } from '../../services/kernel/zone-offset.js';

const HOUR = 3_600_000;
const MINUTE = 60_000;
const at = (iso: string) => Date.parse(iso);

describe('zone offsets cached per day and transition', () => {
  it('finds both Europe/Berlin transitions to the millisecond', () => {
    expect(transitionOnDay('Europe/Berlin', at('2026-03-29T12:00:00Z'))).toEqual({ atMs: at('2026-03-29T01:00:00Z'), before: HOUR, after: 2 * HOUR });
    expect(transitionOnDay('Europe/Berlin', at('2026-10-25T12:00:00Z'))).toEqual({ atMs: at('2026-10-25T01:00:00Z'), before: 2 * HOUR, after: HOUR });
    expect(zoneOffsetMs('Europe/Berlin', at('2026-03-29T00:59:59.999Z'))).toBe(HOUR);
    expect(zoneOffsetMs('Europe/Berlin', at('2026-03-29T01:00:00Z'))).toBe(2 * HOUR);
    expect(zoneOffsetMs('Europe/Berlin', at('2026-10-25T00:59:59.999Z'))).toBe(2 * HOUR);
    expect(zoneOffsetMs('Europe/Berlin', at('2026-10-25T01:00:00Z'))).toBe(HOUR);
  });

  it('a day without a change has no transition', () => {
    expect(transitionOnDay('Europe/Berlin', at('2026-05-04T12:00:00Z'))).toBeNull();
    expect(zoneOffsetMs('Europe/Berlin', at('2026-05-04T00:00:00Z'))).toBe(2 * HOUR);
    expect(zoneOffsetMs('Europe/Berlin', at('2026-01-15T23:59:59.999Z'))).toBe(HOUR);
  });

  it('Australia/Lord_Howe changes by 30 minutes', () => {
    // Summer time from 2026-10-04 02:00 local (+10:30) and back on 2026-04-05 02:00 local (+11:00).
    expect(transitionOnDay('Australia/Lord_Howe', at('2026-10-03T12:00:00Z'))).toEqual({
      atMs: at('2026-10-03T15:30:00Z'),
      before: 10.5 * HOUR,
      after: 11 * HOUR,
    });
    expect(transitionOnDay('Australia/Lord_Howe', at('2026-04-04T12:00:00Z'))).toEqual({
      atMs: at('2026-04-04T15:00:00Z'),
      before: 11 * HOUR,
      after: 10.5 * HOUR,
    });
  });

  it('zones without daylight saving: one offset all year', () => {
    for (const [zone, offset] of [
      ['Asia/Kolkata', 5.5 * HOUR],
      ['UTC', 0],
      ['Asia/Tokyo', 9 * HOUR],
      ['America/Phoenix', -7 * HOUR],
    ] as const) {
      for (let ms = at('2026-01-01T00:00:00Z'); ms < at('2027-01-01T00:00:00Z'); ms += 7 * 86_400_000 + 13 * MINUTE) {
        expect(zoneOffsetMs(zone, ms)).toBe(offset);
      }
      expect(transitionOnDay(zone, at('2026-03-29T12:00:00Z'))).toBeNull();
    }
  });

  it('far in the past: local mean time with seconds, and the change to standard time', () => {
    // Berlin kept local mean time (+00:53:28) until 1893-04-01 00:00 local.
    expect(zoneOffsetMs('Europe/Berlin', at('1890-06-01T12:00:00Z'))).toBe(53 * MINUTE + 28_000);
    expect(transitionOnDay('Europe/Berlin', at('1893-03-31T12:00:00Z'))).toEqual({
      atMs: at('1893-03-31T23:06:32Z'),
      before: 53 * MINUTE + 28_000,
      after: HOUR,
    });
    expect(zoneOffsetMs('Asia/Kolkata', at('1850-01-01T00:00:00Z'))).toBe(exactOffsetMs('Asia/Kolkata', at('1850-01-01T00:00:00Z')));
    expect(zoneOffsetMs('America/New_York', at('0500-01-01T00:00:00Z'))).toBe(-(4 * HOUR + 56 * MINUTE + 2_000));
  });

  it('agrees with the time-zone data at every minute around the changes and at random instants', () => {
    const zones = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'America/St_Johns', 'Asia/Kolkata', 'Pacific/Chatham', 'Europe/Dublin'];
    for (const zone of zones) {
      for (const day of ['2026-03-08', '2026-03-29', '2026-04-05', '2026-09-27', '2026-10-04', '2026-10-25', '2026-11-01']) {
        for (let ms = at(`${day}T00:00:00Z`) - 12 * HOUR; ms < at(`${day}T00:00:00Z`) + 36 * HOUR; ms += 7 * MINUTE) {
          expect(zoneOffsetMs(zone, ms), `${zone} ${new Date(ms).toISOString()}`).toBe(exactOffsetMs(zone, ms));
        }
      }
    }
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const from = at('1850-01-01T00:00:00Z');
    const to = at('2100-01-01T00:00:00Z');
    for (let i = 0; i < 3_000; i++) {
      const zone = zones[i % zones.length]!;
      const ms = Math.floor(from + random() * (to - from));
      expect(zoneOffsetMs(zone, ms), `${zone} ${new Date(ms).toISOString()}`).toBe(exactOffsetMs(zone, ms));
    }
  });
});

describe('local times shown twice (the hour repeated when clocks go back)', () => {
  it('Europe/Berlin, 2027-10-31: 02:00–02:59 local happens at +02:00 and again at +01:00', () => {
    for (const iso of ['2027-10-31T00:00:00Z', '2027-10-31T00:59:59.999Z', '2027-10-31T01:00:00Z', '2027-10-31T01:30:00Z', '2027-10-31T01:59:59.999Z']) {
      expect(isRepeatedLocalTime('Europe/Berlin', at(iso)), iso).toBe(true);
    }
    for (const iso of ['2027-10-30T23:59:59.999Z', '2027-10-31T02:00:00Z', '2027-10-31T12:00:00Z', '2027-07-01T00:30:00Z']) {
      expect(isRepeatedLocalTime('Europe/Berlin', at(iso)), iso).toBe(false);
    }
  });

  it('the spring change repeats nothing; zones without changes never do', () => {
    for (const iso of ['2027-03-28T00:59:59Z', '2027-03-28T01:00:00Z', '2027-03-28T01:30:00Z']) expect(isRepeatedLocalTime('Europe/Berlin', at(iso)), iso).toBe(false);
    expect(isRepeatedLocalTime('Asia/Tokyo', at('2027-10-31T01:00:00Z'))).toBe(false);
    expect(isRepeatedLocalTime('UTC', at('2027-10-31T01:00:00Z'))).toBe(false);
  });

  it('other zones and other sizes of change', () => {
    // America/New_York, 2027-11-07: 01:00–01:59 local at -04:00 (05:00Z) and -05:00 (06:00Z).
    expect(isRepeatedLocalTime('America/New_York', at('2027-11-07T05:30:00Z'))).toBe(true);
    expect(isRepeatedLocalTime('America/New_York', at('2027-11-07T06:30:00Z'))).toBe(true);
    expect(isRepeatedLocalTime('America/New_York', at('2027-11-07T07:00:00Z'))).toBe(false);
    // Australia/Lord_Howe goes back by 30 minutes (2027-04-04 02:00 +11:00 → 01:30 +10:30): 01:30–01:59 local twice.
    expect(isRepeatedLocalTime('Australia/Lord_Howe', at('2027-04-03T14:45:00Z'))).toBe(true);
    expect(isRepeatedLocalTime('Australia/Lord_Howe', at('2027-04-03T14:15:00Z'))).toBe(false);
  });
});
