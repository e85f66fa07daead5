import type { EntityManager } from '@mikro-orm/postgresql';
import { type Context, requireCrm } from '../kernel/context.js';
import { notFound } from '../kernel/errors.js';
import type { MailTemplate } from '../kernel/jobs.js';
import { notifyOutbox } from '../outbox/outbox.service.js';
import { Participation } from '../participations/participation.entity.js';
import { getProvider } from '../providers/provider.service.js';
import { MailDelivery, type MailDeliveryStatus } from './mail-delivery.entity.js';
import { sql } from '../kernel/sql.js';

export interface DeliveryUpdate {
  /** Id of the outbox row that asked for the mail. */
  id: string;
  template: MailTemplate | string;
  participationId: string | null;
  status: MailDeliveryStatus;
  /** Omitted: keep the stored one. */
  recipient?: string;
  /** Omitted: keep the stored one; null clears it. */
  lastError?: string | null;
  messageId?: string;
  /** This write begins an attempt (SENDING, SKIPPED, a render failure): `attempts` counts it. */
  startsAttempt?: boolean;
}

/** Whether the row changed, and whether it took over an attempt that had stopped in SENDING. */
export type DeliveryRecordOutcome = 'recorded' | 'taken-over' | 'unchanged';

/**
 * Writes the state of one mail in one statement (insert or update). A mail
 * that is SENT or SKIPPED never changes again, so a late or doubled job
 * cannot undo or repeat it; 'unchanged' tells the caller to send nothing.
 */
export async function recordDelivery(ctx: Context, update: DeliveryUpdate): Promise<DeliveryRecordOutcome> {
  const startsAttempt = update.startsAttempt ?? false;
  // Erasing a customer locks its row (FOR UPDATE) before it scrubs mail_delivery; sharing that lock in this
  // statement means either the erasure sees this row, or this write sees the erasure (FOR SHARE waits for it
  // and reads the erased row): an address never outlives its customer.
  const rows = await sql<{ previous: string | null }>(ctx, `with customer as (
       select c.erased_at from participation p join customer c on c.id = p.customer_id where p.id = ? and ?::boolean for share of c
     ), previous as (select status from mail_delivery where id = ?)
     insert into mail_delivery as d (id, template, recipient, participation_id, status, attempts, last_error, message_id, updated_at)
     values (?, ?, case when exists (select 1 from customer where erased_at is not null) then 'erased' else ? end, ?, ?, ?, ?, ?, now())
     on conflict (id) do update set
       template = excluded.template,
       recipient = case when ? then excluded.recipient else d.recipient end,
       participation_id = coalesce(excluded.participation_id, d.participation_id),
       status = excluded.status,
       attempts = d.attempts + ?,
       last_error = case when ? then excluded.last_error else d.last_error end,
       message_id = coalesce(excluded.message_id, d.message_id),
       updated_at = now()
     where d.status not in ('SENT', 'SKIPPED')
     returning (select status from previous) as previous`,
    [
      update.participationId,
      Boolean(update.participationId && update.recipient),
      update.id,
      update.id,
      update.template,
      update.recipient ?? '',
      update.participationId,
      update.status,
      startsAttempt ? 1 : 0,
      update.lastError ?? null,
      update.messageId ?? null,
      update.recipient !== undefined,
      startsAttempt ? 1 : 0,
      update.lastError !== undefined,
    ],
  );
  if (!rows.length) return 'unchanged';
  return update.status === 'SENDING' && rows[0]!.previous === 'SENDING' ? 'taken-over' : 'recorded';
}

/** Takes back the SENT of `handOver` when the server refused the finished message after all. */
export async function revertSent(ctx: Context, id: string, status: 'RETRYING' | 'FAILED', lastError: string): Promise<void> {
  await sql(ctx, `update mail_delivery set status = ?, last_error = ?, message_id = null, updated_at = now() where id = ? and status = 'SENT'`, [status, lastError, id]);
}

/** Marks a mail FAILED with its reason unless it was sent meanwhile (a job BullMQ gave up on, or whose job was lost). */
export async function markMailFailed(ctx: Context, update: Omit<DeliveryUpdate, 'status'> & { lastError: string }): Promise<void> {
  await recordDelivery(ctx, { ...update, status: 'FAILED' });
}

/**
 * Records the mails among outbox rows the relay just handed to BullMQ as
 * QUEUED, in the relay's transaction. A mail queued again (its job was lost)
 * goes back to QUEUED; SENT, SKIPPED and FAILED mails stay as they are.
 */
export async function recordMailsQueued(em: EntityManager, outboxIds: string[]): Promise<void> {
  if (!outboxIds.length) return;
  await em.execute(
    `insert into mail_delivery as d (id, template, recipient, participation_id, status, attempts, updated_at)
     select o.id, coalesce(o.payload->>'template', 'unknown'), '', (o.payload->'params'->>'participationId')::uuid, 'QUEUED', 0, now()
       from outbox_message o where o.kind = 'mail' and o.id in (${outboxIds.map(() => '?').join(',')})
     on conflict (id) do update set status = 'QUEUED', updated_at = now()
     where d.status not in ('SENT', 'SKIPPED', 'FAILED')`,
    outboxIds,
  );
}

/** Mails not finished whose row has not moved for `olderThanMs`: candidates for a lost BullMQ job. */
export async function findStalledMails(ctx: Context, olderThanMs: number, limit = 200): Promise<{ id: string; template: string; participationId: string | null }[]> {
  const rows = await sql<{ id: string; template: string; participation_id: string | null }>(ctx, `select id, template, participation_id from mail_delivery
      where status in ('QUEUED', 'SENDING', 'RETRYING') and updated_at < now() - make_interval(secs => ?)
      order by id limit ?`,
    [olderThanMs / 1000, limit],
  );
  return rows.map((row) => ({ id: String(row.id), template: row.template, participationId: row.participation_id }));
}

/**
 * Hands a mail whose job was lost back to the relay by marking its outbox row
 * pending again (same row, same job id). Returns false when the row can no
 * longer be sent: a farewell mail to an erased customer keeps no address.
 */
export async function requeueMail(ctx: Context, outboxId: string): Promise<boolean> {
  const changed = await sql<{ id: string }>(ctx, `update outbox_message set dispatched_at = null where id = ? and kind = 'mail' and payload->>'template' is not null returning id`,
    [outboxId],
  );
  if (changed.length) await notifyOutbox(ctx.em);
  return changed.length > 0;
}

export interface MailDeliveryView {
  template: string;
  /** Null while the mail waits to be rendered (PENDING, QUEUED). */
  recipient: string | null;
  status: MailDeliveryStatus | 'PENDING';
  attempts: number;
  lastError: string | null;
  updatedAt: Date;
}

/**
 * Every mail about a participation of the caller's CRM, oldest first:
 * recorded deliveries, and mails still waiting in the outbox (PENDING, e.g.
 * while Redis is away). Another CRM's participation answers 404.
 */
export async function mailDeliveriesOfParticipation(ctx: Context, providerReference: string, participationReference: string): Promise<MailDeliveryView[]> {
  const crm = requireCrm(ctx);
  const provider = await getProvider(ctx, providerReference);
  const participation = await ctx.em.findOne(Participation, { crm, reference: participationReference, appointment: { provider } }, { fields: ['id'] });
  if (!participation) throw notFound('Participation', participationReference);
  const recorded = await ctx.em.find(MailDelivery, { participationId: participation.id }, { orderBy: { id: 'asc' } });
  const pending = await sql<{ id: string; template: string; created_at: Date }>(ctx, `select id, payload->>'template' as template, created_at from outbox_message
      where dispatched_at is null and kind = 'mail' and payload->'params'->>'participationId' = ? order by id`,
    [participation.id],
  );
  const known = new Set(recorded.map((row) => String(row.id)));
  const views: (MailDeliveryView & { id: bigint })[] = [
    ...recorded.map((row) => ({
      id: BigInt(row.id),
      template: row.template,
      recipient: row.recipient || null,
      status: row.status,
      attempts: row.attempts,
      lastError: row.lastError,
      updatedAt: row.updatedAt,
    })),
    ...pending
      .filter((row) => !known.has(String(row.id)))
      .map((row) => ({ id: BigInt(row.id), template: row.template, recipient: null, status: 'PENDING' as const, attempts: 0, lastError: null, updatedAt: new Date(row.created_at) })),
  ];
  return views.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(({ id: _id, ...view }) => view);
}
