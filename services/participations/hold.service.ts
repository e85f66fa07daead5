import type { Context } from '../kernel/context.js';
import { inTransaction } from '../kernel/context.js';
import { announceCapacity, announceLotRemoved } from '../appointments/capacity-events.js';
import { QUEUES } from '../kernel/jobs.js';
import { announceAppointmentChange } from '../live/appointment-events.js';
import { writeOutbox } from '../outbox/outbox.service.js';
import { Participation } from './participation.entity.js';
import { lockParticipation } from './participation-state.js';
import { metrics } from '../kernel/metrics.js';
import { sql } from '../kernel/sql.js';

/**
 * Makes a RESERVED participation a hold: valid for the configured hold time
 * (3 minutes), with a delayed job that removes it if it is not completed.
 */
export function placeHold(ctx: Context, participation: Participation): void {
  participation.expiresAt = new Date(ctx.clock.now().getTime() + ctx.config.holdMs);
  writeOutbox(ctx.em, {
    kind: 'job',
    topic: QUEUES.holdExpiry,
    payload: { participationId: participation.id },
    runAt: participation.expiresAt,
  });
}

export type HoldExpiryOutcome = 'removed' | 'gone' | 'completed' | { notDueForMs: number };

/**
 * Removes a hold that was not completed in time and announces the freed
 * place. An appointment the booking flow made for the slot that now holds
 * no participation at all (it only ever had holds, all expired) is removed
 * with it, so the slot is a Bookable again exactly as before, and no empty
 * appointment shows in CRM listings or blocks changes of its timeslot. Safe
 * to run any number of times: it re-checks the state under the appointment's
 * lock and does nothing to a hold that was completed.
 */
export async function expireHold(ctx: Context, participationId: string): Promise<HoldExpiryOutcome> {
  // Most holds are completed (or gone) before their job fires: one plain read settles those without a transaction.
  // A hold that still looks due is decided under the lock below, which reads it again.
  const [seen] = await sql<{ state: string }>(ctx, 'select state from participation where id = ?', [participationId]);
  if (!seen) return 'gone';
  if (seen.state !== 'RESERVED') return 'completed';
  const outcome = await inTransaction(ctx, async (tx): Promise<HoldExpiryOutcome> => {
    // The one lock-and-re-read of participation writers (appointment first, as in every capacity-changing write).
    const locked = await lockParticipation(tx, participationId);
    if (!locked) return 'gone';
    const { appointment, participation: hold } = locked;
    if (hold.state !== 'RESERVED') return 'completed';
    const now = tx.clock.now().getTime();
    const expiresAt = hold.expiresAt?.getTime() ?? 0;
    if (expiresAt > now) return { notDueForMs: expiresAt - now };
    tx.em.remove(hold);
    await tx.em.flush();
    announceAppointmentChange(tx, 'HOLD_EXPIRED', appointment, hold, 'RESERVED');
    if (appointment.timeslot && appointment.state === 'ACTIVE' && !(await tx.em.count(Participation, { appointment }))) {
      await tx.em.populate(appointment, ['resource', 'timeslot', 'provider']);
      tx.em.remove(appointment);
      await tx.em.flush();
      await announceLotRemoved(tx, appointment);
    } else {
      await announceCapacity(tx, appointment);
    }
    return 'removed';
  });
  if (outcome === 'removed') metrics.holdsExpired.inc();
  return outcome;
}

/** Ids of holds whose time is up but which are still stored (their expiry job may have been lost). */
export async function findExpiredHolds(ctx: Context, limit = 500): Promise<string[]> {
  const rows = await ctx.em.find(
    Participation,
    { state: 'RESERVED', expiresAt: { $lte: ctx.clock.now() } },
    { fields: ['id'], limit, orderBy: { expiresAt: 'asc' } },
  );
  return rows.map((row) => row.id);
}
