import type { EntityManager } from '@mikro-orm/postgresql';
import { TOPICS } from '../kernel/jobs.js';
import { OutboxMessage, type OutboxKind } from './outbox-message.entity.js';

/** PostgreSQL channel on which a commit that wrote outbox rows wakes the relay. */
export const OUTBOX_CHANNEL = 'outbox_pending';

/** An outbox row a statement writes itself (see booking/place-claim.ts givePlace), instead of through writeOutbox. */
export interface OutboxDraft {
  kind: OutboxKind;
  topic: string;
  payload: Record<string, unknown>;
  runAt?: Date | null;
}

/**
 * An INSERT of outbox rows for writers that insert them in the statement
 * that makes the change (see booking/place-claim.ts givePlace): one row per
 * draft for each row of `from` (CTEs with one row when the change was made,
 * none otherwise), in the drafts' order. Its `?` binds draftsJson of the
 * drafts. Capacity events get `capacityFields` merged into their payload (a
 * jsonb expression: the count and the version under the change's lock).
 */
export const outboxInsertFrom = (from: string, capacityFields: string) => `
  insert into outbox_message (kind, topic, payload, run_at, created_at, attempts)
  select m.kind, m.topic,
         case when m.topic = '${TOPICS.capacityChanged}' then m.payload || ${capacityFields} else m.payload end,
         m.run_at, now(), 0
    from ${from}, rows from (jsonb_to_recordset(?::jsonb) as (kind text, topic text, payload jsonb, run_at timestamptz)) with ordinality as m(kind, topic, payload, run_at, n)
   order by m.n`;

/** The drafts as outboxInsertFrom binds them. */
export const draftsJson = (drafts: OutboxDraft[]) => JSON.stringify(drafts.map((d) => ({ kind: d.kind, topic: d.topic, payload: d.payload, run_at: d.runAt ?? null })));

/** EntityManagers (one per transaction) that wrote outbox rows the relay has not been woken for yet. */
const unannounced = new WeakSet<EntityManager>();
/** Resources whose capacity events a transaction (by its EntityManager) wrote: their calendar counters move after commit. */
const touchedResources = new WeakMap<EntityManager, Set<string>>();

/**
 * Records a side effect in the current transaction. NOTIFY is transactional in
 * PostgreSQL: the relay hears it only if and when the transaction commits.
 */
export function writeOutbox(
  em: EntityManager,
  message: { kind: OutboxKind; topic: string; payload: Record<string, unknown>; runAt?: Date | null },
): OutboxMessage {
  const row = em.create(OutboxMessage, {
    kind: message.kind,
    topic: message.topic,
    payload: message.payload,
    runAt: message.runAt ?? null,
    createdAt: new Date(),
    attempts: 0,
  });
  em.persist(row);
  unannounced.add(em);
  if (message.topic === TOPICS.capacityChanged && typeof message.payload.resourceId === 'string') addTouchedResources(em, [message.payload.resourceId]);
  return row;
}

/**
 * Records many side effects at once with direct INSERTs of `chunk` rows
 * (not entities the unit of work keeps and compares on every flush), for
 * writers of hundreds of rows such as a series of appointments.
 */
export async function writeOutboxMany(
  em: EntityManager,
  messages: readonly { kind: OutboxKind; topic: string; payload: Record<string, unknown>; runAt?: Date | null }[],
  chunk = 100,
): Promise<void> {
  for (let i = 0; i < messages.length; i += chunk) {
    const createdAt = new Date();
    await em.insertMany(
      OutboxMessage,
      messages.slice(i, i + chunk).map((message) => ({ kind: message.kind, topic: message.topic, payload: message.payload, runAt: message.runAt ?? null, createdAt, attempts: 0 })),
    );
  }
  if (!messages.length) return;
  unannounced.add(em);
  for (const message of messages) {
    if (message.topic === TOPICS.capacityChanged && typeof message.payload.resourceId === 'string') addTouchedResources(em, [message.payload.resourceId]);
  }
}

/** Notes resources whose capacity changed in the transaction of `em`. */
export function addTouchedResources(em: EntityManager, resourceIds: Iterable<string>): void {
  let touched = touchedResources.get(em);
  if (!touched) touchedResources.set(em, (touched = new Set()));
  for (const id of resourceIds) touched.add(id);
}

/** The resources noted for `em`'s transaction, forgetting them. */
export function takeTouchedResources(em: EntityManager): Set<string> | undefined {
  const touched = touchedResources.get(em);
  touchedResources.delete(em);
  return touched;
}

/** Flushes pending outbox rows and wakes the relay once the surrounding transaction commits (also for rows only updated, e.g. re-queued). */
export async function notifyOutbox(em: EntityManager): Promise<void> {
  unannounced.delete(em);
  await em.flush();
  // em.execute runs on the transaction's connection; em.getConnection().execute would take a second pool connection
  // outside the transaction (NOTIFY before commit, and a pool deadlock when every connection waits for one lock).
  await em.execute(`select pg_notify('${OUTBOX_CHANNEL}', '')`);
}

/** How long dispatched outbox rows are kept (for diagnosis) before the worker deletes them. */
export const OUTBOX_RETENTION_MS = 7 * 24 * 3600_000;

/** Deletes up to `limit` rows dispatched before `before` whose mail (if any) has reached its end; returns how many went. */
export async function pruneDispatchedOutbox(em: EntityManager, before: Date, limit = 5000): Promise<number> {
  const deleted = await em.execute<{ id: string }[]>(
    `delete from outbox_message where id in (
       select o.id from outbox_message o
        where o.dispatched_at is not null and o.dispatched_at < ?
          -- a mail still on its way may need its row to be queued again (lost-mail sweep)
          and not exists (select 1 from mail_delivery d where d.id = o.id and d.status not in ('SENT', 'FAILED', 'SKIPPED'))
        order by o.id limit ?
     ) returning id`,
    [before, limit],
  );
  return deleted.length;
}

/**
 * Writes this transaction's pending outbox rows; `inTransaction` calls it
 * before committing. Inserting them wakes the relay on commit by itself (a
 * statement trigger on outbox_message sends the NOTIFY).
 */
export async function notifyOutboxIfWritten(em: EntityManager): Promise<void> {
  if (!unannounced.has(em)) return;
  unannounced.delete(em);
  await em.flush();
}
