import { type Context, inLeanTransaction, RetryInOrmTransaction } from '../kernel/context.js';
import { announceCapacity, announceLotRemoved } from '../appointments/capacity-events.js';
import { QUEUES, TOPICS } from '../kernel/jobs.js';
import { announceAppointmentChange, appointmentChangeDraft } from '../live/appointment-events.js';
import type { SlotCapacityEvent } from '../live/capacity-event.js';
import { addTouchedResources, writeOutbox } from '../outbox/outbox.service.js';
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
  timeslot: { state: string; default_capacity: number; resource_open: boolean } | null;
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
  const [lot] = await sql<HeldLot>(tx, `select a.id, a.crm_id, a.provider_id, a.resource_id, a.timeslot_id, a.reference, a.state, a.start, a."end"
       from appointment a where a.id = (select appointment_id from participation where id = ?) for update`,
    [participationId],
  );
  if (!lot) return 'gone';
  const [read] = await sql<UnderLock>(tx, `select
       (select row_to_json(h) from (select state, reference, expires_at from participation where id = ? and appointment_id = ?) h) as hold,
       exists (select 1 from participation where appointment_id = ? and id <> ?) as others,
       exists (select 1 from product where provider_id = ? and (coalesce(lead_time_minutes, 0) > 0 or coalesce(follow_up_time_minutes, 0) > 0)) as blocked_time,
       (select row_to_json(s) from (select t.state, t.default_capacity, (not r.archived and r.deleted_at is null) as resource_open
          from timeslot t join resource r on r.id = t.resource_id where t.id = ?) s) as timeslot,
       exists (select 1 from appointment o where o.resource_id = ? and o.id <> ? and o.state = 'ACTIVE' and not o.archived
                  and tstzrange(o.blocked_from, o.blocked_to) && tstzrange(?::timestamptz, ?::timestamptz)) as busy`,
    [participationId, lot.id, lot.id, participationId, lot.provider_id, lot.timeslot_id, lot.resource_id, lot.id, lot.start, lot.end],
  );
  const { hold, timeslot } = read!;
  if (!hold) return 'gone';
  if (hold.state !== 'RESERVED') return 'completed';
  const due = notDue(tx, hold.expires_at);
  if (due) return due;
  if (lot.state !== 'ACTIVE' || !timeslot || read!.others || read!.blocked_time) throw new RetryInOrmTransaction('the hold is not the last of an open slot without blocked time');

  await sql(tx, `delete from participation where id = ? and state = 'RESERVED'`, [participationId]);
  const appointment = { id: lot.id, reference: lot.reference, state: lot.state, crm: { id: lot.crm_id }, provider: { id: lot.provider_id } };
  const open = timeslot.state === 'BOOKABLE' && timeslot.resource_open && !read!.busy;
  const freed: Omit<SlotCapacityEvent, 'version'> = {
    scope: 'slot',
    resourceId: lot.resource_id,
    timeslotId: lot.timeslot_id,
    appointmentId: null,
    productId: null,
    kind: 'models.Bookable',
    start: new Date(lot.start).toISOString(),
    end: new Date(lot.end).toISOString(),
    capacity: timeslot.default_capacity,
    capacityLeft: open ? timeslot.default_capacity : 0,
  };
  const drafts = [
    appointmentChangeDraft(tx, 'HOLD_EXPIRED', appointment, { id: participationId, reference: hold.reference, state: 'RESERVED' }, 'RESERVED'),
    { kind: 'event', topic: TOPICS.capacityChanged, payload: freed },
  ];
  // The version is PostgreSQL's clock under the appointment's lock, as eventVersion reads it; events in id order.
  await sql(tx, `with gone as (delete from appointment where id = ? returning id)
     insert into outbox_message (kind, topic, payload, run_at, created_at, attempts)
     select m.kind, m.topic,
            case when m.topic = ? then m.payload || jsonb_build_object('version', (extract(epoch from clock_timestamp()) * 1000000)::bigint) else m.payload end,
            null, now(), 0
       from gone, rows from (jsonb_to_recordset(?::jsonb) as (kind text, topic text, payload jsonb)) with ordinality as m(kind, topic, payload, n)
      order by m.n`,
    [lot.id, TOPICS.capacityChanged, JSON.stringify(drafts)],
    { commit: true },
  );
  addTouchedResources(tx.em, [lot.resource_id]);
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
