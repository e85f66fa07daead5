import { describe, expect, it } from 'vitest';
import {
  BusyIndex,
  durationCandidates,
  fitsDuration,
  type LotState,
  lotListed,
  lotPlacesLeft,
  type Period,
  productFitsSlot,
  productsForSlot,
  type SlotProduct,
} from '../../services/booking/bookability.js';
import { parseDateTimeInput } from '../../services/kernel/wall-clock.js';
import { cutSlots } from '../../services/timeslots/slot-grid.js';

const BERLIN = 'Europe/Berlin';
const at = (local: string) => parseDateTimeInput(local, BERLIN).getTime();
const period = (from: string, to: string): Period => ({ startMs: at(from), endMs: at(to) });
const product = (lead: number | null, followUp: number | null, id = 'p'): SlotProduct => ({
  id,
  minDuration: null,
  maxDuration: null,
  leadTimeMinutes: lead,
  followUpTimeMinutes: followUp,
});
const none = new BusyIndex([]);

describe('BusyIndex', () => {
  it('answers overlap with half-open periods, whatever the order it was given', () => {
    const busy = new BusyIndex([period('2026-05-04T13:00', '2026-05-04T14:00'), period('2026-05-04T09:00', '2026-05-04T10:00')]);
    expect(busy.size).toBe(2);
    expect(busy.overlaps(at('2026-05-04T09:30'), at('2026-05-04T09:45'))).toBe(true);
    expect(busy.overlaps(at('2026-05-04T10:00'), at('2026-05-04T13:00'))).toBe(false);
    expect(busy.overlaps(at('2026-05-04T08:00'), at('2026-05-04T09:00'))).toBe(false);
    expect(busy.overlaps(at('2026-05-04T12:59'), at('2026-05-04T13:01'))).toBe(true);
    expect(busy.overlaps(at('2026-05-04T14:00'), at('2026-05-04T15:00'))).toBe(false);
  });

  it('sees a long period that starts early and covers later short ones', () => {
    const busy = new BusyIndex([period('2026-05-04T08:00', '2026-05-04T18:00'), period('2026-05-04T09:00', '2026-05-04T09:15')]);
    expect(busy.overlaps(at('2026-05-04T16:00'), at('2026-05-04T16:30'))).toBe(true);
    expect(busy.overlaps(at('2026-05-04T18:00'), at('2026-05-04T18:30'))).toBe(false);
  });

  it('an empty index overlaps nothing', () => {
    expect(none.overlaps(0, Number.MAX_SAFE_INTEGER)).toBe(false);
  });
});

describe('productFitsSlot: lead and follow-up time inside the timeslot, clear of busy periods', () => {
  const ts = period('2026-05-04T08:00', '2026-05-04T18:00');
  const slot = period('2026-05-04T10:00', '2026-05-04T10:30');
  const busyAt = (...periods: Period[]) => new BusyIndex(periods);

  it('without lead, follow-up or busy time every slot of the timeslot qualifies', () => {
    expect(productFitsSlot(product(0, 0), slot, ts, none)).toBe(true);
    expect(productFitsSlot(product(null, null), period('2026-05-04T08:00', '2026-05-04T08:30'), ts, none)).toBe(true);
    expect(productFitsSlot(product(null, null), period('2026-05-04T17:30', '2026-05-04T18:00'), ts, none)).toBe(true);
  });

  it('the lead time must fit into the timeslot before the slot, the follow-up time after it', () => {
    expect(productFitsSlot(product(15, 0), period('2026-05-04T08:00', '2026-05-04T08:30'), ts, none)).toBe(false);
    expect(productFitsSlot(product(30, 0), period('2026-05-04T08:30', '2026-05-04T09:00'), ts, none)).toBe(true);
    expect(productFitsSlot(product(31, 0), period('2026-05-04T08:30', '2026-05-04T09:00'), ts, none)).toBe(false);
    expect(productFitsSlot(product(0, 1), period('2026-05-04T17:30', '2026-05-04T18:00'), ts, none)).toBe(false);
    expect(productFitsSlot(product(0, 30), period('2026-05-04T17:00', '2026-05-04T17:30'), ts, none)).toBe(true);
  });

  it('a busy period overlapping the slot, its lead or its follow-up time blocks it; touching does not', () => {
    expect(productFitsSlot(product(0, 0), slot, ts, busyAt(period('2026-05-04T10:15', '2026-05-04T10:20')))).toBe(false);
    const before = period('2026-05-04T09:00', '2026-05-04T09:45');
    const after = period('2026-05-04T10:40', '2026-05-04T11:00');
    expect(productFitsSlot(product(15, 0), slot, ts, busyAt(before))).toBe(true);
    expect(productFitsSlot(product(16, 0), slot, ts, busyAt(before))).toBe(false);
    expect(productFitsSlot(product(0, 10), slot, ts, busyAt(after))).toBe(true);
    expect(productFitsSlot(product(0, 11), slot, ts, busyAt(after))).toBe(false);
    expect(productFitsSlot(product(30, 30), slot, ts, busyAt(period('2026-05-04T08:00', '2026-05-04T09:30')))).toBe(true);
  });

  it('filters a grid as the listing does: a busy half hour with 15 minutes lead and follow-up', () => {
    const grid = { start: new Date(at('2026-05-04T08:00')), end: new Date(at('2026-05-04T12:00')), raster: 30 };
    const timeslot = { startMs: grid.start.getTime(), endMs: grid.end.getTime() };
    const busy = busyAt(period('2026-05-04T10:00', '2026-05-04T10:30'));
    const kept = cutSlots(grid)
      .map((s) => ({ startMs: s.start.getTime(), endMs: s.end.getTime() }))
      .filter((s) => productFitsSlot(product(15, 15), s, timeslot, busy))
      .map((s) => new Date(s.startMs).toISOString());
    expect(kept).toEqual(['2026-05-04T06:30:00.000Z', '2026-05-04T07:00:00.000Z', '2026-05-04T09:00:00.000Z']);
  });

  it('counts real minutes across the autumn change', () => {
    const night = { startMs: parseDateTimeInput('2026-10-25T00:00', BERLIN).getTime(), endMs: parseDateTimeInput('2026-10-25T06:00', BERLIN).getTime() };
    const first = { startMs: parseDateTimeInput('2026-10-25T02:00+02:00', BERLIN).getTime(), endMs: parseDateTimeInput('2026-10-25T02:30+02:00', BERLIN).getTime() };
    const busy = busyAt({ startMs: parseDateTimeInput('2026-10-25T00:30+02:00', BERLIN).getTime(), endMs: parseDateTimeInput('2026-10-25T01:00+02:00', BERLIN).getTime() });
    expect(productFitsSlot(product(60, 0), first, night, busy)).toBe(true);
    expect(productFitsSlot(product(61, 0), first, night, busy)).toBe(false);
  });

  it('productsForSlot keeps the products that fit, in the given order', () => {
    const products = [product(0, 0, 'plain'), product(90, 0, 'long-lead'), product(0, 15, 'follow')];
    expect(productsForSlot(products, slot, ts, busyAt(period('2026-05-04T10:30', '2026-05-04T10:40'))).map((p) => p.id)).toEqual(['plain', 'long-lead']);
  });
});

describe('durations', () => {
  const short = { ...product(0, 0, 'short'), maxDuration: 30 };
  const long = { ...product(0, 0, 'long'), minDuration: 60 };

  it('fitsDuration checks minimum and maximum inclusively; null is no bound', () => {
    expect(fitsDuration(short, 30)).toBe(true);
    expect(fitsDuration(short, 31)).toBe(false);
    expect(fitsDuration(long, 60)).toBe(true);
    expect(fitsDuration(long, 59)).toBe(false);
    expect(fitsDuration(product(0, 0), 1)).toBe(true);
  });

  it('durationCandidates: the products that fit; all of them when none does and no product was chosen', () => {
    expect(durationCandidates([short, long], 30, false).map((p) => p.id)).toEqual(['short']);
    expect(durationCandidates([short, long], 45, false).map((p) => p.id)).toEqual(['short', 'long']);
    expect(durationCandidates([short, long], 45, true)).toEqual([]);
  });
});

describe('lotListed / lotPlacesLeft', () => {
  const now = at('2026-05-04T09:00');
  const open: LotState = {
    state: 'ACTIVE',
    archived: false,
    acceptBookings: true,
    startMs: at('2026-05-04T10:00'),
    capacity: 3,
    timeslotState: 'BOOKABLE',
    resourceOpen: true,
  };

  it('an open appointment shows its capacity minus the places taken, never below 0', () => {
    expect(lotPlacesLeft(open, 1, now)).toBe(2);
    expect(lotPlacesLeft(open, 5, now)).toBe(0);
    expect(lotPlacesLeft({ ...open, timeslotState: null }, 0, now)).toBe(3);
  });

  it.each<[string, Partial<LotState>]>([
    ['cancelled', { state: 'CANCELLED' }],
    ['archived', { archived: true }],
    ['private', { acceptBookings: false }],
    ['started', { startMs: now }],
    ['made from a closed timeslot', { timeslotState: 'CREATED' }],
    ['of an archived or deleted resource', { resourceOpen: false }],
  ])('an appointment %s is not listed', (_what, change) => {
    expect(lotListed({ ...open, ...change }, now)).toBe(false);
    expect(lotPlacesLeft({ ...open, ...change }, 0, now)).toBe(0);
  });
});
