import { Entity, Index, PrimaryKey, Property, type Opt } from '@mikro-orm/core';

export type MailDeliveryStatus = 'SENT' | 'FAILED' | 'RETRYING';

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
