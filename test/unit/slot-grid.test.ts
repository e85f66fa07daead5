import { describe, expect, it } from 'vitest';
import { DomainError } from '../../services/kernel/errors.js';
import { formatWithOffset, parseDateTimeInput } from '../../services/kernel/wall-clock.js';
import {
  cutSlots,
  slotAt,
  slotStartsOnGrid,
  type GridTimeslot,
  type Interval,
} from '../../services/timeslots/slot-grid.js';

const BERLIN = 'Europe/Berlin';
const MINUTE = 60_000;
const at = (text: string) => parseDateTimeInput(text, BERLIN);
const local = (date: Date) => formatWithOffset(date, BERLIN);
const timeslot = (start: string, end: string, raster: number): GridTimeslot => ({ start: at(start), end: at(end), raster });
const interval = (start: string, end: string): Interval => ({ start: at(start), end: at(end) });

/** The grid invariants: each slot is `raster` real minutes, slots touch, none repeats, all inside the timeslot. */
function expectSoundGrid(slots: Interval[], ts: GridTimeslot): void {
  const starts = slots.map((slot) => slot.start.getTime());
  expect(new Set(starts).size).toBe(slots.length);
  slots.forEach((slot, index) => {
    expect(slot.end.getTime() - slot.start.getTime()).toBe(ts.raster * MINUTE);
    if (index > 0) expect(slot.start.getTime()).toBe(slots[index - 1]!.end.getTime());
    expect(slot.start.getTime()).toBeGreaterThanOrEqual(ts.start.getTime());
    expect(slot.end.getTime()).toBeLessThanOrEqual(ts.end.getTime());
  });
  if (slots.length) expect(slots[0]!.start.getTime()).toBe(ts.start.getTime());
  // Whatever is left after the last slot is shorter than one slot.
  const last = slots.at(-1)?.end.getTime() ?? ts.start.getTime();
  expect(ts.end.getTime() - last).toBeLessThan(ts.raster * MINUTE);
}

describe('cutSlots', () => {
  it('cuts the spec example 08:00–18:00 with raster 30 into 20 slots', () => {
    const ts = timeslot('2026-05-04T08:00', '2026-05-04T18:00', 30);
    const slots = cutSlots(ts);
    expect(slots).toHaveLength(20);
    expectSoundGrid(slots, ts);
    expect(local(slots[0]!.start)).toBe('2026-05-04T08:00:00+02:00');
    expect(local(slots[0]!.end)).toBe('2026-05-04T08:30:00+02:00');
    expect(local(slots[19]!.start)).toBe('2026-05-04T17:30:00+02:00');
    expect(local(slots[19]!.end)).toBe('2026-05-04T18:00:00+02:00');
  });

  it.each([
    [60, 10],
    [45, 13],
    [25, 24],
    [600, 1],
    [601, 0],
    [1, 600],
  ])('08:00–18:00 with raster %i gives %i slots and drops a shorter remainder', (raster, count) => {
    const ts = timeslot('2026-05-04T08:00', '2026-05-04T18:00', raster);
    const slots = cutSlots(ts);
    expect(slots).toHaveLength(count);
    expectSoundGrid(slots, ts);
  });

  it('starts the grid at the timeslot start, not at the full hour', () => {
    const slots = cutSlots(timeslot('2026-05-04T08:10', '2026-05-04T09:30', 30));
    expect(slots.map((slot) => local(slot.start))).toEqual([
      '2026-05-04T08:10:00+02:00',
      '2026-05-04T08:40:00+02:00',
    ]);
  });

  it('gives no slots for an empty or inverted timeslot', () => {
    expect(cutSlots(timeslot('2026-05-04T08:00', '2026-05-04T08:00', 30))).toEqual([]);
    expect(cutSlots(timeslot('2026-05-04T09:00', '2026-05-04T08:00', 30))).toEqual([]);
  });

  it('spans midnight and days', () => {
    const ts = timeslot('2026-05-04T22:00', '2026-05-06T02:00', 60);
    const slots = cutSlots(ts);
    expect(slots).toHaveLength(28);
    expectSoundGrid(slots, ts);
  });

  describe('across daylight-saving changes in Europe/Berlin', () => {
    // 2026-03-29 00:00 local (+01:00) to 06:00 local (+02:00) is 5 real hours.
    const spring = timeslot('2026-03-29T00:00', '2026-03-29T06:00', 30);
    // 2026-10-25 00:00 local (+02:00) to 06:00 local (+01:00) is 7 real hours.
    const autumn = timeslot('2026-10-25T00:00', '2026-10-25T06:00', 30);

    it('the timeslots really span 300 and 420 elapsed minutes', () => {
      expect((spring.end.getTime() - spring.start.getTime()) / MINUTE).toBe(300);
      expect((autumn.end.getTime() - autumn.start.getTime()) / MINUTE).toBe(420);
    });

    it.each([
      ['spring', 30, 10],
      ['spring', 60, 5],
      ['spring', 45, 6],
      ['autumn', 30, 14],
      ['autumn', 60, 7],
      ['autumn', 45, 9],
    ])('%s, raster %i: %i slots = floor(elapsed minutes / raster), contiguous, no duplicates', (season, raster, count) => {
      const base = season === 'spring' ? spring : autumn;
      const ts = { ...base, raster };
      const slots = cutSlots(ts);
      const elapsed = (ts.end.getTime() - ts.start.getTime()) / MINUTE;
      expect(slots).toHaveLength(Math.floor(elapsed / raster));
      expect(slots).toHaveLength(count);
      expectSoundGrid(slots, ts);
    });

    it('spring: no slot starts in the missing hour 02:00–03:00 local', () => {
      const starts = cutSlots(spring).map((slot) => local(slot.start));
      expect(starts).toEqual([
        '2026-03-29T00:00:00+01:00',
        '2026-03-29T00:30:00+01:00',
        '2026-03-29T01:00:00+01:00',
        '2026-03-29T01:30:00+01:00',
        '2026-03-29T03:00:00+02:00',
        '2026-03-29T03:30:00+02:00',
        '2026-03-29T04:00:00+02:00',
        '2026-03-29T04:30:00+02:00',
        '2026-03-29T05:00:00+02:00',
        '2026-03-29T05:30:00+02:00',
      ]);
    });

    it('autumn: the repeated hour 02:00–03:00 local has its slots twice, once per offset', () => {
      const starts = cutSlots(autumn).map((slot) => local(slot.start));
      expect(starts).toEqual([
        '2026-10-25T00:00:00+02:00',
        '2026-10-25T00:30:00+02:00',
        '2026-10-25T01:00:00+02:00',
        '2026-10-25T01:30:00+02:00',
        '2026-10-25T02:00:00+02:00',
        '2026-10-25T02:30:00+02:00',
        '2026-10-25T02:00:00+01:00',
        '2026-10-25T02:30:00+01:00',
        '2026-10-25T03:00:00+01:00',
        '2026-10-25T03:30:00+01:00',
        '2026-10-25T04:00:00+01:00',
        '2026-10-25T04:30:00+01:00',
        '2026-10-25T05:00:00+01:00',
        '2026-10-25T05:30:00+01:00',
      ]);
    });

    it('raster 45 in spring keeps real 45-minute steps through the change', () => {
      const starts = cutSlots({ ...spring, raster: 45 }).map((slot) => local(slot.start));
      expect(starts).toEqual([
        '2026-03-29T00:00:00+01:00',
        '2026-03-29T00:45:00+01:00',
        '2026-03-29T01:30:00+01:00',
        '2026-03-29T03:15:00+02:00',
        '2026-03-29T04:00:00+02:00',
        '2026-03-29T04:45:00+02:00',
      ]);
    });

    it('a full day across each change has 23 and 25 hourly slots', () => {
      expect(cutSlots(timeslot('2026-03-29T00:00', '2026-03-30T00:00', 60))).toHaveLength(23);
      expect(cutSlots(timeslot('2026-10-25T00:00', '2026-10-26T00:00', 60))).toHaveLength(25);
    });
  });

  describe('options', () => {
    const ts = timeslot('2026-05-04T08:00', '2026-05-04T18:00', 30);

    it('from leaves out slots that start before it, without shifting the grid', () => {
      const slots = cutSlots(ts, { from: at('2026-05-04T12:10') });
      expect(slots).toHaveLength(11);
      expect(local(slots[0]!.start)).toBe('2026-05-04T12:30:00+02:00');
    });

    it('from exactly on a slot start keeps that slot', () => {
      expect(local(cutSlots(ts, { from: at('2026-05-04T12:30') })[0]!.start)).toBe('2026-05-04T12:30:00+02:00');
    });

    it('from before the timeslot or after its end', () => {
      expect(cutSlots(ts, { from: at('2026-05-01T00:00') })).toHaveLength(20);
      expect(cutSlots(ts, { from: at('2026-05-04T17:31') })).toEqual([]);
      expect(cutSlots(ts, { from: at('2026-05-05T00:00') })).toEqual([]);
    });

    it('limit caps the number of slots', () => {
      expect(cutSlots(ts, { limit: 3 })).toHaveLength(3);
      expect(cutSlots(ts, { limit: 0 })).toEqual([]);
      expect(cutSlots(ts, { from: at('2026-05-04T17:00'), limit: 5 })).toHaveLength(2);
    });

    it('handles a long timeslot with a small raster from a late "from" without walking the past', () => {
      const year: GridTimeslot = { start: new Date('2026-01-01T00:00:00Z'), end: new Date('2027-01-01T00:00:00Z'), raster: 1 };
      const slots = cutSlots(year, { from: new Date('2026-12-31T23:58:30Z') });
      expect(slots.map((slot) => slot.start.toISOString())).toEqual(['2026-12-31T23:59:00.000Z']);
    });
  });

  it.each([[0], [-30], [1.5], [Number.NaN], [Number.POSITIVE_INFINITY]])('refuses raster %s with a 400 naming raster', (raster) => {
    const run = () => cutSlots({ ...timeslot('2026-05-04T08:00', '2026-05-04T18:00', 30), raster });
    expect(run).toThrow(DomainError);
    expect(run).toThrow('raster must be a whole number of minutes greater than 0');
  });

  it('refuses invalid dates with a 400 naming the bound', () => {
    expect(() => cutSlots({ start: new Date(Number.NaN), end: new Date(), raster: 30 })).toThrow('start must be a valid date-time');
    expect(() => cutSlots({ start: new Date(), end: new Date(Number.NaN), raster: 30 })).toThrow('end must be a valid date-time');
  });
});

describe('slotStartsOnGrid and slotAt', () => {
  const ts = timeslot('2026-05-04T08:00', '2026-05-04T18:00', 30);

  it('accepts every slot of the grid and returns it', () => {
    for (const slot of cutSlots(ts)) {
      expect(slotStartsOnGrid(ts, slot.start)).toBe(true);
      expect(slotAt(ts, slot.start)).toEqual(slot);
      expect(slotAt(ts, slot.start, slot.end)).toEqual(slot);
    }
  });

  it.each([
    ['before the timeslot', '2026-05-04T07:30'],
    ['off the grid by minutes', '2026-05-04T08:15'],
    ['off the grid by a second', '2026-05-04T08:30:01'],
    ['the last slot would overrun the end', '2026-05-04T17:45'],
    ['at the end', '2026-05-04T18:00'],
    ['after the end', '2026-05-04T18:30'],
    ['another day', '2026-05-05T08:00'],
  ])('refuses a start %s', (_why, start) => {
    expect(slotStartsOnGrid(ts, at(start))).toBe(false);
    expect(slotAt(ts, at(start))).toBeNull();
  });

  it('refuses a start that is off by a millisecond', () => {
    expect(slotAt(ts, new Date(at('2026-05-04T08:30').getTime() + 1))).toBeNull();
  });

  it('with an end, the end must be the slot end', () => {
    const start = at('2026-05-04T09:00');
    expect(slotAt(ts, start, at('2026-05-04T09:30'))).not.toBeNull();
    expect(slotAt(ts, start, at('2026-05-04T10:00'))).toBeNull();
    expect(slotAt(ts, start, at('2026-05-04T09:00'))).toBeNull();
    expect(slotAt(ts, start, new Date(Number.NaN))).toBeNull();
  });

  it('refuses an invalid date instead of throwing', () => {
    expect(slotStartsOnGrid(ts, new Date(Number.NaN))).toBe(false);
  });

  it('knows both 02:30 slots of the repeated autumn hour, and none in the spring gap', () => {
    const autumn = timeslot('2026-10-25T00:00', '2026-10-25T06:00', 30);
    expect(slotStartsOnGrid(autumn, parseDateTimeInput('2026-10-25T02:30+02:00', BERLIN))).toBe(true);
    expect(slotStartsOnGrid(autumn, parseDateTimeInput('2026-10-25T02:30+01:00', BERLIN))).toBe(true);
    const spring = timeslot('2026-03-29T00:00', '2026-03-29T06:00', 60);
    // 02:30+01:00 is 03:30+02:00, which is off the hourly grid that starts at 00:00+01:00.
    expect(slotStartsOnGrid(spring, parseDateTimeInput('2026-03-29T02:30+01:00', BERLIN))).toBe(false);
    expect(slotStartsOnGrid(spring, parseDateTimeInput('2026-03-29T03:00+02:00', BERLIN))).toBe(true);
  });
});
