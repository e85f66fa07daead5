import { afterEach, describe, expect, it, vi } from 'vitest';
import { SettableClock, systemClock } from '../../services/kernel/clock.js';

describe('SettableClock', () => {
  afterEach(() => vi.useRealTimers());

  it('follows real time until set', () => {
    vi.useFakeTimers({ now: new Date('2026-03-01T10:00:00Z') });
    const clock = new SettableClock();
    expect(clock.now().toISOString()).toBe('2026-03-01T10:00:00.000Z');
    vi.advanceTimersByTime(1500);
    expect(clock.now().toISOString()).toBe('2026-03-01T10:00:01.500Z');
  });

  it('freezes at the instant it is set to', () => {
    vi.useFakeTimers({ now: new Date('2026-03-01T10:00:00Z') });
    const clock = new SettableClock();
    clock.set('2027-01-15T08:30:00Z');
    vi.advanceTimersByTime(60_000);
    expect(clock.now().toISOString()).toBe('2027-01-15T08:30:00.000Z');
    clock.set(new Date('2027-01-16T00:00:00Z'));
    expect(clock.now().toISOString()).toBe('2027-01-16T00:00:00.000Z');
  });

  it('advances a frozen clock, e.g. past a 3-minute hold', () => {
    const clock = new SettableClock();
    clock.set('2027-01-15T08:30:00Z');
    clock.advance(3 * 60_000);
    clock.advance(1);
    expect(clock.now().toISOString()).toBe('2027-01-15T08:33:00.001Z');
  });

  it('set() discards an earlier advance', () => {
    const clock = new SettableClock();
    clock.advance(10_000);
    clock.set('2027-01-15T08:30:00Z');
    expect(clock.now().toISOString()).toBe('2027-01-15T08:30:00.000Z');
  });

  it('advances real time when not frozen', () => {
    vi.useFakeTimers({ now: new Date('2026-03-01T10:00:00Z') });
    const clock = new SettableClock();
    clock.advance(-60_000);
    expect(clock.now().toISOString()).toBe('2026-03-01T09:59:00.000Z');
  });

  it('reset() returns to real time', () => {
    vi.useFakeTimers({ now: new Date('2026-03-01T10:00:00Z') });
    const clock = new SettableClock();
    clock.set('2030-01-01T00:00:00Z');
    clock.advance(5);
    clock.reset();
    expect(clock.now().toISOString()).toBe('2026-03-01T10:00:00.000Z');
  });

  it('returns a new Date each time, so callers cannot move the clock', () => {
    const clock = new SettableClock();
    clock.set('2027-01-15T08:30:00Z');
    clock.now().setFullYear(1999);
    expect(clock.now().toISOString()).toBe('2027-01-15T08:30:00.000Z');
    expect(systemClock.now()).toBeInstanceOf(Date);
  });
});
