import { z } from 'zod';
import { announceSlotsAroundClaim, claimedSlotEvent } from '../appointments/capacity-events.js';
import { type Context, inLeanTransaction } from '../kernel/context.js';
import { validationError } from '../kernel/errors.js';
import { limitPublic, RateLimitedError } from '../kernel/rate-limits.js';
import { newId } from '../kernel/ids.js';
import { sql } from '../kernel/sql.js';
import { QUEUES } from '../kernel/jobs.js';
import { appointmentChangeDraft } from '../live/appointment-events.js';
import { parseInput } from '../kernel/validation.js';
import type { ParticipationState } from '../participations/participation.entity.js';
import { bookingScope, type ScopeProduct, type ScopeResource, utcInstantOf, uuidField } from './booking-request.js';
import { claimAndGive, type LotRow, slotTaken } from './place-claim.js';
import { metrics } from '../kernel/metrics.js';

export const reserveInput = z
  .object({
    timeslot_uuid: uuidField('timeslot_uuid').nullish(),
    appointment_uuid: uuidField('appointment_uuid').nullish(),
    product_uuid: uuidField('product_uuid'),
    from: z.string().trim().min(1),
    to: z.string().trim().min(1),
  })
  .refine((value) => value.timeslot_uuid || value.appointment_uuid, { message: 'timeslot_uuid or appointment_uuid is required', path: ['timeslot_uuid'] });

/** A place in a booking-flow appointment as a write path leaves it. */
export interface HeldPlace {
  participation: { id: string; placeholderId: string; state: ParticipationState; messages: string[] | null };
  lot: LotRow;
  resource: ScopeResource;
  product: ScopeProduct | null;
  capacityLeft: number;
}

export type ReserveResult = HeldPlace;

/**
 * Holds one place for the configured hold time (3 minutes). One short
 * transaction: read the slot (with its appointment, if it has one), then one
 * statement that creates the appointment on the slot's first booking or
 * locks it (no lock wider than the slot), gives the place if one is left and
 * writes the expiry job and the events to the outbox; then COMMIT.
 */
export async function reserveAppointment(
  ctx: Context,
  ref: string,
  raw: unknown,
  query: { extraRefs: string[]; channelKey?: string },
): Promise<ReserveResult> {
  await limitPublic(ctx, 'reserve', ref);
  const input = parseInput(reserveInput, raw);
  const scope = await bookingScope(ctx, ref, query.extraRefs, query.channelKey);
  const from = utcInstantOf(input.from, 'from');
  const to = utcInstantOf(input.to, 'to');
  if (to <= from) throw validationError('to must be after from');
  const requested = scope.productByUuid(input.product_uuid);
  const reserved = await inLeanTransaction(ctx, async (tx) => {
    const request = { scope, uuid: (input.appointment_uuid ?? input.timeslot_uuid)!, uuidKind: input.appointment_uuid ? ('appointment' as const) : ('timeslot' as const), from, to, product: requested };
    const { claim, count, place } = await claimAndGive(tx, request, async ({ lot, resource }) => {
      await assertHoldCap(tx, resource.id);
      const participation = { id: newId(), placeholderId: newId(), state: 'RESERVED' as const, messages: null };
      const expiresAt = new Date(tx.clock.now().getTime() + tx.config.holdMs);
      return {
        participation,
        row: { ...participation, customerId: null, expiresAt, channelKey: scope.channelKey, locale: null, clientIp: tx.limits ? tx.clientIp : null },
        // Events first: the relay hands rows on in id order.
        outbox: [
          claimedSlotEvent(slotOf(lot)),
          appointmentChangeDraft(tx, 'PARTICIPATION_ADDED', appointmentOf(lot), { ...participation, reference: participation.id }),
          { kind: 'job' as const, topic: QUEUES.holdExpiry, payload: { participationId: participation.id }, runAt: expiresAt },
        ],
      };
    });
    if (!count.given) throw slotTaken();
    const { lot, resource } = claim;
    // The slot's first booking may close its neighbours (lead and follow-up time): announced with it.
    if (claim.created && scope.hasBlockedTime(resource)) await announceSlotsAroundClaim(tx, slotOf(lot));
    const capacityLeft = count.capacity - count.taken - 1;
    return { participation: place.participation, lot: { ...lot, capacity: count.capacity }, resource, product: scope.productById(lot.product_id), capacityLeft };
  });
  metrics.holdsCreated.inc();
  return reserved;
}

/**
 * The cap on live holds one client IP may have on one resource
 * (HOLDS_PER_CLIENT), when the limits are on. Counted by PostgreSQL under a
 * transaction-scoped advisory lock of (IP, resource), so parallel
 * reservations of one client on every gateway wait for each other and
 * cannot pass the cap together. A full cap answers 429 with the seconds
 * until the first of the client's holds runs out.
 */
async function assertHoldCap(tx: Context, resourceId: string): Promise<void> {
  if (!tx.limits || !tx.clientIp) return;
  const max = tx.config.rateLimits.holdsPerClient;
  await sql(tx, 'select pg_advisory_xact_lock(hashtextextended(?, 12))', [`hold|${tx.clientIp}|${resourceId}`]);
  const [row] = await sql<{ live: number; first_expiry: Date | null }>(tx, `select count(*)::int as live, min(p.expires_at) as first_expiry
       from participation p join appointment a on a.id = p.appointment_id
      where p.client_ip = ? and p.state = 'RESERVED' and p.expires_at > ? and a.resource_id = ?`,
    [tx.clientIp, tx.clock.now(), resourceId],
  );
  if (row && row.live >= max) {
    const waitMs = row.first_expiry ? new Date(row.first_expiry).getTime() - tx.clock.now().getTime() : tx.config.holdMs;
    throw new RateLimitedError(
      `At most ${max} live holds per client on this resource: complete one or let it expire`,
      Math.max(1, Math.ceil(waitMs / 1000)),
    );
  }
}

/** The slot facts of a claimed appointment for its capacity event. */
export const slotOf = (lot: LotRow) => ({
  id: lot.id,
  resourceId: lot.resource_id,
  timeslotId: lot.timeslot_id,
  productId: lot.product_id,
  start: lot.start,
  end: lot.end,
  capacity: lot.capacity,
});

/** The appointment facts of a claimed appointment for the CRM feed. */
export const appointmentOf = (lot: LotRow) => ({
  id: lot.id,
  reference: lot.reference,
  state: lot.state,
  crm: { id: lot.crm_id },
  provider: { id: lot.provider_id },
});
