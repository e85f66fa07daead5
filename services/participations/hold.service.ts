import { type Context, inLeanTransaction, RetryInOrmTransaction } from '../kernel/context.js';
import { announceCapacity, announceLotRemoved, freedSlotEvent, LOT_REMOVAL_FACTS, lotRemovalParams } from '../appointments/capacity-events.js';
import { QUEUES, TOPICS } from '../kernel/jobs.js';
import { announceAppointmentChange, appointmentChangeDraft } from '../live/appointment-events.js';
import { EVENT_VERSION_SQL } from '../live/event-version.js';
import { addTouchedResources, draftsJson, type OutboxDraft, outboxInsertFrom, writeOutbox } from '../outbox/outbox.service.js';
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
 *
 * The common case, the last hold of a slot whose provider's products keep
 * no lead or follow-up time, runs as plain statements (expireLastHold);
 * everything else, and that case when it turns out otherwise under the
 * lock, runs through the ORM (expireHoldWithOrm), whose announcements also
 * cover the neighbouring slots.
 */
export async function expireHold(ctx: Context, participationId: string): Promise<HoldExpiryOutcome> {
  // Most holds are completed (or gone) before their job fires: one plain read settles those without a transaction.
  // A hold that still looks due is decided under the lock below, which reads it again.
  const [seen] = await sql<{ state: string }>(ctx, 'select state from participation where id = ?', [participationId]);
  if (!seen) return 'gone';
  if (seen.state !== 'RESERVED') return 'completed';
  const outcome = await inLeanTransaction(ctx, (tx) => (tx.sqlTransaction ? expireLastHold(tx, participationId) : expireHoldWithOrm(tx, participationId)));
  if (outcome === 'removed') metrics.holdsExpired.inc();
  return outcome;
}

async function expireHoldWithOrm(tx: Context, participationId: string): Promise<HoldExpiryOutcome> {
  // The one lock-and-re-read of participation writers (appointment first, as in every capacity-changing write).
  const locked = await lockParticipation(tx, participationId);
  if (!locked) return 'gone';
  const { appointment, participation: hold } = locked;
  if (hold.state !== 'RESERVED') return 'completed';
  const due = notDue(tx, hold.expiresAt);
  if (due) return due;
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
}

/** A hold whose time is not up yet (its job fired early): how long until it is; null when it is due. */
function notDue(ctx: Context, expiresAt: Date | string | null | undefined): { notDueForMs: number } | null {
  const now = ctx.clock.now().getTime();
  const at = expiresAt ? new Date(expiresAt).getTime() : 0;
  return at > now ? { notDueForMs: at - now } : null;
}

/** An appointment of the booking flow as expireLastHold locks it (timestamps as text). */
interface HeldLot {
  id: string;
  crm_id: string;
  provider_id: string;
  resource_id: string;
  timeslot_id: string | null;
  reference: string;
  state: 'ACTIVE' | 'CANCELLED';
  start: string;
  end: string;
}

/** What expireLastHold reads under the appointment's lock. */
interface UnderLock {
  hold: { state: string; reference: string | null; expires_at: string | null } | null;
  /** Anything else takes part in the appointment (then it stays, and the ORM path announces its capacity). */
  others: boolean;
  /** Some product of the provider keeps lead or follow-up time (then neighbouring slots change too: the ORM path). */
  blocked_time: boolean;
  timeslot: { id: string; state: string; default_capacity: number; resource_open: boolean } | null;
  /** Another active appointment's blocked period covers the slot. */
  busy: boolean;
}

/**
 * The plain-statement expiry of a slot's last hold: BEGIN with the
 * appointment's lock; under it, one read of the hold and of what the freed
 * slot is; the hold deleted; then the appointment deleted with the CRM feed's
 * HOLD_EXPIRED and the slot's Bookable event (the same facts announceLotRemoved
 * writes) in the statement that carries COMMIT. In any other case it throws
 * RetryInOrmTransaction before it has written anything.
 */
async function expireLastHold(tx: Context, participationId: string): Promise<HoldExpiryOutcome> {
  const [row] = await sql<HeldLot>(tx, `select a.id, a.crm_id, a.provider_id, a.resource_id, a.timeslot_id, a.reference, a.state, a.start, a."end"
       from appointment a where a.id = (select appointment_id from participation where id = ?) for update`,
    [participationId],
  );
  if (!row) return 'gone';
  const lot = { id: row.id, providerId: row.provider_id, resourceId: row.resource_id, start: new Date(row.start), end: new Date(row.end) };
  const [read] = await sql<UnderLock>(tx, `select
       (select row_to_json(h) from (select state, reference, expires_at from participation where id = ? and appointment_id = ?) h) as hold,
       exists (select 1 from participation where appointment_id = ? and id <> ?) as others,
       (select row_to_json(s) from (select t.id, t.state, t.default_capacity, (not r.archived and r.deleted_at is null) as resource_open
          from timeslot t join resource r on r.id = t.resource_id where t.id = ?) s) as timeslot,
       ${LOT_REMOVAL_FACTS}`,
    [participationId, lot.id, lot.id, participationId, row.timeslot_id, ...lotRemovalParams(lot)],
  );
  const { hold, others, timeslot, blocked_time: blockedTime, busy } = read!;
  if (!hold) return 'gone';
  if (hold.state !== 'RESERVED') return 'completed';
  const due = notDue(tx, hold.expires_at);
  if (due) return due;
  if (row.state !== 'ACTIVE' || !timeslot || others || blockedTime) throw new RetryInOrmTransaction('the hold is not the last of an open slot without blocked time');

  await sql(tx, `delete from participation where id = ? and state = 'RESERVED'`, [participationId]);
  const appointment = { id: row.id, reference: row.reference, state: row.state, crm: { id: row.crm_id }, provider: { id: row.provider_id } };
  const freed = freedSlotEvent(lot, { id: timeslot.id, state: timeslot.state, defaultCapacity: timeslot.default_capacity }, { resourceOpen: timeslot.resource_open, busy });
  const drafts: OutboxDraft[] = [
    appointmentChangeDraft(tx, 'HOLD_EXPIRED', appointment, { id: participationId, reference: hold.reference, state: 'RESERVED' }, 'RESERVED'),
    { kind: 'event', topic: TOPICS.capacityChanged, payload: { ...freed } },
  ];
  // The version is PostgreSQL's clock under the appointment's lock, as eventVersion reads it.
  await sql(tx, `with gone as (delete from appointment where id = ? returning id) ${outboxInsertFrom('gone', `jsonb_build_object('version', ${EVENT_VERSION_SQL})`)}`, [lot.id, draftsJson(drafts)], {
    commit: true,
  });
  addTouchedResources(tx.em, [lot.resourceId]);
  return 'removed';
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
