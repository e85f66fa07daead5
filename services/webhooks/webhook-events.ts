import type { EntityManager } from '@mikro-orm/postgresql';
import { TOPICS } from '../kernel/jobs.js';
import { newId } from '../kernel/ids.js';
import { type AppointmentChange, appointmentChangeView, readAppointmentEvent } from '../live/appointment-events.js';

/**
 * Webhook event types: the changes of the `appointmentChanged` subscription,
 * one vocabulary, spelled as webhook types are (PARTICIPATION_STATE_CHANGED →
 * participation.state_changed). The body's `data.change` carries the
 * subscription's name.
 */
export const WEBHOOK_EVENT_OF_CHANGE = {
  PARTICIPATION_ADDED: 'participation.added',
  PARTICIPATION_STATE_CHANGED: 'participation.state_changed',
  HOLD_EXPIRED: 'hold.expired',
  APPOINTMENT_CANCELLED: 'appointment.cancelled',
  APPOINTMENT_DELETED: 'appointment.deleted',
} as const satisfies Record<AppointmentChange, string>;

export const WEBHOOK_EVENT_TYPES = Object.values(WEBHOOK_EVENT_OF_CHANGE) as [WebhookEventType, ...WebhookEventType[]];
export type WebhookEventType = (typeof WEBHOOK_EVENT_OF_CHANGE)[AppointmentChange];

/** Queue of webhook deliveries; its jobs carry the delivery id. */
export const WEBHOOK_TOPIC = 'webhook';

export interface WebhookJob {
  deliveryId: string;
}

interface RelayedRow {
  id: string;
  topic: string;
  payload: Record<string, unknown>;
}

/**
 * Turns the appointment changes among relayed outbox rows into one delivery
 * per webhook of the same CRM that chose the event type, and one outbox job
 * per delivery; called by the relay in the transaction that marks the rows
 * dispatched, so an event is fanned out once, and only once it is committed.
 * Returns how many deliveries were created.
 */
export async function fanOutWebhookDeliveries(em: EntityManager, rows: RelayedRow[]): Promise<number> {
  const events = rows
    .filter((row) => row.topic === TOPICS.appointmentChanged)
    .map((row) => ({ outboxId: String(row.id), event: readAppointmentEvent(row.payload) }))
    .filter((item): item is { outboxId: string; event: NonNullable<typeof item.event> } => item.event !== undefined);
  if (!events.length) return 0;
  const crmIds = [...new Set(events.map((item) => item.event.crmId))];
  const webhooks = await em.execute<{ id: string; crm_id: string; events: string[] }[]>(
    `select id, crm_id, events from webhook where crm_id in (${crmIds.map(() => '?').join(',')})`,
    crmIds,
  );
  if (!webhooks.length) return 0;
  const providerIds = [...new Set(events.map((item) => item.event.providerId))];
  const providers = await em.execute<{ id: string; reference: string }[]>(
    `select id, reference from provider where id in (${providerIds.map(() => '?').join(',')})`,
    providerIds,
  );
  const providerReference = new Map(providers.map((row) => [row.id, row.reference]));

  const deliveries: unknown[][] = [];
  for (const { outboxId, event } of events) {
    const type = WEBHOOK_EVENT_OF_CHANGE[event.change];
    for (const webhook of webhooks) {
      if (webhook.crm_id !== event.crmId || !webhook.events.includes(type)) continue;
      const id = newId();
      const body = JSON.stringify({
        id,
        type,
        eventId: outboxId,
        createdAt: event.at,
        crmId: event.crmId,
        data: appointmentChangeView(event, providerReference.get(event.providerId) ?? null),
      });
      deliveries.push([id, webhook.id, event.crmId, outboxId, type, body]);
    }
  }
  if (!deliveries.length) return 0;
  const created = await em.execute<{ id: string }[]>(
    `insert into webhook_delivery (id, webhook_id, crm_id, event_id, event_type, body, status, attempts, attempt_log, created_at)
     values ${deliveries.map(() => `(?, ?, ?, ?, ?, ?, 'PENDING', 0, '[]', now())`).join(', ')}
     on conflict (webhook_id, event_id) do nothing returning id`,
    deliveries.flat(),
  );
  if (!created.length) return 0;
  // Inserted outbox rows wake the relay on commit (statement trigger), which queues one job per delivery.
  await em.execute(
    `insert into outbox_message (kind, topic, payload, created_at, attempts) values ${created.map(() => `('job', '${WEBHOOK_TOPIC}', ?::jsonb, now(), 0)`).join(', ')}`,
    created.map((row) => JSON.stringify({ deliveryId: row.id } satisfies WebhookJob)),
  );
  return created.length;
}
