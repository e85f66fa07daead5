import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt, type Rel, Unique } from '@mikro-orm/core';
import { CrmIntegration } from '../crm/crm-integration.entity.js';
import { newId } from '../kernel/ids.js';
import type { WebhookEventType } from './webhook-events.js';

/** An endpoint of a CRM that hears the event types it chose, signed with its secret. */
@Entity({ tableName: 'webhook' })
export class Webhook {
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne({ entity: () => CrmIntegration, deleteRule: 'cascade', index: true })
  crm!: Rel<CrmIntegration>;

  @Property({ type: 'string', length: 2048 })
  url!: string;

  /** Event types (WEBHOOK_EVENT_TYPES) the endpoint receives. */
  @Property({ type: 'json' })
  events!: WebhookEventType[];

  @Property({ type: 'string', length: 255, nullable: true })
  description: string | null = null;

  /** The HMAC key of the signatures; kept because every delivery is signed with it, shown to the CRM once. */
  @Property({ type: 'string', length: 128, hidden: true })
  secret!: string;

  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();
}

/**
 * PENDING: waiting for its first attempt; RETRYING: an attempt failed and
 * another follows at nextAttemptAt; SUCCEEDED: the endpoint answered 2xx;
 * FAILED: out of attempts.
 */
export const WEBHOOK_DELIVERY_STATUSES = ['PENDING', 'RETRYING', 'SUCCEEDED', 'FAILED'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export interface WebhookAttempt {
  at: string;
  /** HTTP status of the answer; null when none came (refused, timed out). */
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** One event for one webhook: the signed body and every attempt to deliver it. */
@Entity({ tableName: 'webhook_delivery' })
@Unique({ properties: ['webhook', 'eventId'] })
@Index({ properties: ['webhook', 'createdAt'] })
@Index({ properties: ['createdAt'] })
@Index({ name: 'webhook_delivery_pending_index', expression: `create index "webhook_delivery_pending_index" on "webhook_delivery" ("next_attempt_at") where "status" in ('PENDING', 'RETRYING')` })
export class WebhookDelivery {
  /** Also the de-duplication id the receiver gets (`id` of the body, `X-Booking-Delivery`). */
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne({ entity: () => Webhook, deleteRule: 'cascade' })
  webhook!: Rel<Webhook>;

  @Property({ type: 'string', length: 100 })
  crmId!: string;

  /** The outbox row of the event. */
  @Property({ type: 'bigint' })
  eventId!: string;

  @Property({ type: 'string', length: 64 })
  eventType!: WebhookEventType;

  /** The JSON body exactly as sent and signed. */
  @Property({ type: 'text' })
  body!: string;

  @Property({ type: 'string', length: 16 })
  status!: WebhookDeliveryStatus;

  @Property({ type: 'integer', default: 0 })
  attempts: Opt<number> = 0;

  @Property({ type: 'json', default: '[]' })
  attemptLog: Opt<WebhookAttempt[]> = [];

  @Property({ type: 'datetime', nullable: true })
  nextAttemptAt: Date | null = null;

  /** While an attempt is under way: others leave the delivery alone until then. */
  @Property({ type: 'datetime', nullable: true })
  lockedUntil: Date | null = null;

  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();

  @Property({ type: 'datetime', nullable: true })
  deliveredAt: Date | null = null;
}
