/**
 * Queue names, job names and payloads shared by the gateway (which writes them
 * to the outbox) and the worker (which processes them). Payloads carry ids,
 * never entities.
 */
export const QUEUES = {
  mail: 'mail',
  holdExpiry: 'hold-expiry',
  /** Webhook deliveries (services/webhooks); job data `{ deliveryId }`. */
  webhook: 'webhook',
  /** Periodic work that must run once per interval across all workers (BullMQ job schedulers). */
  maintenance: 'maintenance',
} as const;

/** Job schedulers of the maintenance queue (their ids are also their job names). */
export const MAINTENANCE_JOBS = {
  /** Expired holds and mails whose job Redis lost. */
  holdSweep: 'hold-sweep',
  /** Dispatched outbox rows older than the retention. */
  outboxPrune: 'outbox-prune',
  /** The planner's statistics of tables that changed, where autovacuum is off (kernel/table-statistics.ts). */
  tableStatistics: 'table-statistics',
} as const;
export type MaintenanceJobName = (typeof MAINTENANCE_JOBS)[keyof typeof MAINTENANCE_JOBS];
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export const MAIL_TEMPLATES = [
  'user-verification',
  'participation-booked',
  'participation-canceled',
  'appointment-cancelled',
  'booking-confirmation',
  'booking-request-received',
  'provider-booking-notification',
  'provider-booking-request',
  'provider-booking-cancelled',
] as const;
export type MailTemplate = (typeof MAIL_TEMPLATES)[number];

export interface MailJob {
  template: MailTemplate;
  /** Ids the template needs (userId, participationId, appointmentId, ...). */
  params: Record<string, string | null>;
  /** Free text a CRM or consumer added, e.g. the cancellation message. */
  message?: string | null;
  /**
   * Recipient data carried in the job itself, for mails to a customer who is
   * erased in the same transaction; such rows are marked `personal` and the
   * relay scrubs them once handed over.
   */
  recipient?: { email: string; name: string; language: string };
  personal?: boolean;
}

export interface HoldExpiryJob {
  participationId: string;
}

/** Redis pub/sub topics. */
export const TOPICS = {
  capacityChanged: 'capacity-changed',
  appointmentChanged: 'appointment-changed',
} as const;

/**
 * The Redis channel of a topic: `<QUEUE_PREFIX>:<topic>`, so deployments
 * sharing a Redis (or a Redis Cluster, where PUBLISH reaches every node)
 * never hear each other's events.
 */
export const liveChannel = (prefix: string, topic: string): string => `${prefix}:${topic}`;
