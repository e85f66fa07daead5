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
} as const;
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
