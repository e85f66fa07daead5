/** Source of "now" for every rule that depends on time (holds, past slots, link expiry). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests can set and advance, so a 3-minute hold expires without sleeping. */
export class SettableClock implements Clock {
  private offsetMs = 0;
  private fixed: Date | undefined;

  now(): Date {
    return this.fixed ? new Date(this.fixed.getTime() + this.offsetMs) : new Date(Date.now() + this.offsetMs);
  }

  /** Freezes the clock at the given instant. */
  set(instant: Date | string): void {
    this.fixed = new Date(instant);
    this.offsetMs = 0;
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }

  reset(): void {
    this.fixed = undefined;
    this.offsetMs = 0;
  }
}
