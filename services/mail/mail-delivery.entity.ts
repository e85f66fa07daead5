import { Entity, Index, PrimaryKey, Property, type Opt } from '@mikro-orm/core';

/**
 * QUEUED: handed to BullMQ by the relay; SENDING: an attempt is under way;
 * RETRYING: the last attempt failed and another follows; SENT; FAILED: out of
 * attempts or refused for good (see lastError); SKIPPED: nobody to write to
 * any more (no e-mail address, customer erased, participation deleted).
 */
export const MAIL_DELIVERY_STATUSES = ['QUEUED', 'SENDING', 'RETRYING', 'SENT', 'FAILED', 'SKIPPED'] as const;
export type MailDeliveryStatus = (typeof MAIL_DELIVERY_STATUSES)[number];
/** States after which the mail is never sent (again) by the worker. */
export const FINAL_MAIL_STATUSES: readonly MailDeliveryStatus[] = ['SENT', 'SKIPPED', 'FAILED'];

/**
 * The fate of one e-mail, keyed by the outbox row that asked for it, so a
 * job that runs twice (a crashed worker, two workers) sends it once.
 */
@Entity({ tableName: 'mail_delivery' })
@Index({ properties: ['participationId'] })
export class MailDelivery {
  /** Id of the outbox message. */
  @PrimaryKey({ type: 'bigint' })
  id!: string;

  @Property({ type: 'string', length: 64 })
  template!: string;

  @Property({ type: 'string', length: 320 })
  recipient!: string;

  @Property({ type: 'uuid', nullable: true })
  participationId: string | null = null;

  @Property({ type: 'string', length: 16 })
  status!: MailDeliveryStatus;

  @Property({ type: 'integer', default: 0 })
  attempts: Opt<number> = 0;

  @Property({ type: 'text', nullable: true })
  lastError: string | null = null;

  @Property({ type: 'string', length: 255, nullable: true })
  messageId: string | null = null;

  @Property({ type: 'datetime' })
  updatedAt: Opt<Date> = new Date();
}
