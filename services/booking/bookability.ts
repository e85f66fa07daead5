/**
 * The one rule of the booking flow: is a slot bookable, for which products,
 * and with how many places left. The listing (upcoming_bookables), the claim
 * of a place (reserve, booking), the capacity events and the live feed all
 * decide with these functions, so the fast read path and the locked write
 * path cannot drift apart.
 *
 * Rules:
 * - A slot of a BOOKABLE timeslot with no appointment yet (kind Bookable)
 *   can take product P when P is offered on the channel, P is a duration
 *   candidate of the slot (below), and the slot widened by P's lead time
 *   before and follow-up time after lies inside the timeslot and overlaps no
 *   busy period of the resource.
 * - Duration candidates: a product's minimum and maximum duration decide
 *   only when the consumer chose that product (prdRef of the listing, the
 *   product of a reserve or booking). Otherwise a slot offers the products
 *   whose durations admit its length, or, when none does, every offered
 *   product: durations never hide a slot from a consumer who named none.
 * - A busy period is the blocked period of an active appointment of the
 *   resource: its slot widened by its own product's lead and follow-up time
 *   (stored on the appointment as blocked_from/blocked_to). PostgreSQL
 *   refuses two booking-flow appointments of one resource whose blocked
 *   periods overlap (exclusion constraint appointment_lot_no_overlap), so
 *   the check here and the constraint are the same rule.
 * - An appointment (kind LotAppointment) is listed with capacity − places
 *   taken (REQUESTED, BOOKED, unexpired RESERVED) while it is active, not
 *   archived, open for bookings, has not started, its timeslot (if any) is
 *   BOOKABLE and its resource is open.
 *
 * Intervals are half-open, in epoch milliseconds.
 */

const MINUTE_MS = 60_000;

export interface Period {
  startMs: number;
  endMs: number;
}

/** What the rules need of a product. */
export interface SlotProduct {
  id: string;
  minDuration: number | null;
  maxDuration: number | null;
  leadTimeMinutes: number | null;
  followUpTimeMinutes: number | null;
}

/**
 * The busy periods of one resource, answering "does [a, b) overlap any of
 * them" in O(log n): periods sorted by start with the running maximum of
 * their ends; some period overlaps [a, b) exactly when the latest end among
 * the periods starting before b lies after a.
 */
export class BusyIndex {
  private readonly starts: Float64Array;
  private readonly maxEnds: Float64Array;

  constructor(periods: readonly Period[]) {
    const sorted = [...periods].sort((x, y) => x.startMs - y.startMs);
    this.starts = new Float64Array(sorted.length);
    this.maxEnds = new Float64Array(sorted.length);
    let maxEnd = -Infinity;
    sorted.forEach((period, i) => {
      maxEnd = Math.max(maxEnd, period.endMs);
      this.starts[i] = period.startMs;
      this.maxEnds[i] = maxEnd;
    });
  }

  get size(): number {
    return this.starts.length;
  }

  /** True when some busy period overlaps [startMs, endMs). */
  overlaps(startMs: number, endMs: number): boolean {
    // Number of periods that start before endMs.
    let low = 0;
    let high = this.starts.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.starts[middle]! < endMs) low = middle + 1;
      else high = middle;
    }
    return low > 0 && this.maxEnds[low - 1]! > startMs;
  }
}

/** Whether a slot of `minutes` suits the product's minimum and maximum duration. */
export const fitsDuration = (product: Pick<SlotProduct, 'minDuration' | 'maxDuration'>, minutes: number): boolean =>
  (product.minDuration ?? 0) <= minutes && (product.maxDuration ?? Infinity) >= minutes;

/** The period a product blocks when booked on a slot: the slot widened by its lead and follow-up time. */
export function blockedPeriod(slot: Period, product: Pick<SlotProduct, 'leadTimeMinutes' | 'followUpTimeMinutes'> | null): Period {
  return {
    startMs: slot.startMs - (product?.leadTimeMinutes ?? 0) * MINUTE_MS,
    endMs: slot.endMs + (product?.followUpTimeMinutes ?? 0) * MINUTE_MS,
  };
}

/**
 * The products a slot of `minutes` may offer before lead time and busy
 * periods are checked: with a chosen product (`productChosen`) those whose
 * minimum and maximum duration admit the slot; without one the same, or all
 * offered products when none admits it.
 */
export function durationCandidates<P extends Pick<SlotProduct, 'minDuration' | 'maxDuration'>>(
  offered: readonly P[],
  minutes: number,
  productChosen: boolean,
): P[] {
  const sized = offered.filter((product) => fitsDuration(product, minutes));
  return sized.length || productChosen ? sized : [...offered];
}

/**
 * Whether a duration candidate (durationCandidates) can be booked on a
 * Bookable slot of the timeslot: its blocked period lies inside the timeslot
 * and clear of the resource's busy periods.
 */
export function productFitsSlot(product: SlotProduct, slot: Period, timeslot: Period, busy: BusyIndex): boolean {
  const blocked = blockedPeriod(slot, product);
  if (blocked.startMs < timeslot.startMs || blocked.endMs > timeslot.endMs) return false;
  return !busy.overlaps(blocked.startMs, blocked.endMs);
}

/** The products (of the slot's duration candidates) that can be booked on a Bookable slot, in the given order. */
export function productsForSlot<P extends SlotProduct>(offered: readonly P[], slot: Period, timeslot: Period, busy: BusyIndex): P[] {
  return offered.filter((product) => productFitsSlot(product, slot, timeslot, busy));
}

/** What decides whether an appointment is listed as a LotAppointment. */
export interface LotState {
  state: string;
  archived: boolean;
  acceptBookings: boolean;
  startMs: number;
  capacity: number;
  /** The state of the timeslot it was made from; null for an appointment a CRM created. */
  timeslotState: string | null;
  /** Neither archived nor deleted. */
  resourceOpen: boolean;
}

/** Whether the booking flow lists the appointment at all (given places are left). */
export function lotListed(lot: LotState, nowMs: number): boolean {
  return (
    lot.state === 'ACTIVE' &&
    !lot.archived &&
    lot.acceptBookings &&
    lot.startMs > nowMs &&
    (lot.timeslotState === null || lot.timeslotState === 'BOOKABLE') &&
    lot.resourceOpen
  );
}

/** Places the booking flow can still give in the appointment: 0 when it is not listed or full. */
export function lotPlacesLeft(lot: LotState, taken: number, nowMs: number): number {
  return lotListed(lot, nowMs) ? Math.max(0, lot.capacity - taken) : 0;
}

/** SQL condition (on participation `p`) of a participation that takes a place at the instant bound to `?`. */
export const OCCUPYING_SQL = `(p.state in ('REQUESTED', 'BOOKED') or (p.state = 'RESERVED' and p.expires_at > ?))`;
