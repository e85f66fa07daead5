import { Entity, Index, PrimaryKey, Property, type Opt } from '@mikro-orm/core';

export type OutboxKind = 'mail' | 'event' | 'job';

/**
 * A side effect written in the same transaction as the change that causes it.
 * The relay hands it to BullMQ or Redis pub/sub after commit and marks it
 * dispatched; until then it stays, so a Redis outage delays and never loses it.
 */
@Entity({ tableName: 'outbox_message' })
@Index({ name: 'outbox_message_pending_index', expression: 'create index "outbox_message_pending_index" on "outbox_message" ("id") where "dispatched_at" is null' })
export class OutboxMessage {
  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @Property({ type: 'string', length: 16 })
  kind!: OutboxKind;

  /** Queue or pub/sub topic the message goes to. */
  @Property({ type: 'string', length: 64 })
  topic!: string;

  @Property({ type: 'json' })
  payload!: Record<string, unknown>;

  /** Earliest instant a job may run (hold expiry); null runs it at once. */
  @Property({ type: 'datetime', nullable: true })
  runAt: Date | null = null;

  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();

  @Property({ type: 'datetime', nullable: true })
  dispatchedAt: Date | null = null;

  @Property({ type: 'integer', default: 0 })
  attempts: Opt<number> = 0;

  @Property({ type: 'text', nullable: true })
  lastError: string | null = null;
}
