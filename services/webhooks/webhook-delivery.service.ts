import { createHmac } from 'node:crypto';
import type { ContextRoot } from '../kernel/context.js';
import type { WebhookAttempt } from './webhook.entity.js';

/** Header of the signature: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const SIGNATURE_HEADER = 'X-Booking-Signature';
/** Header of the delivery id (also `id` in the body): the same on every retry, for de-duplication. */
export const DELIVERY_HEADER = 'X-Booking-Delivery';
export const EVENT_HEADER = 'X-Booking-Event';

/** How long an endpoint may take to answer. */
const REQUEST_TIMEOUT_MS = 10_000;
/** An attempt holds its delivery this long; longer than the request may take, so two workers never send at once. */
const ATTEMPT_LEASE_SECONDS = 60;

/** The signature header value for `body` at `timestamp` (unix seconds). */
export function signWebhookBody(secret: string, timestamp: number, body: string): string {
  const digest = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${digest}`;
}

export type DeliveryOutcome = 'delivered' | 'failed' | 'gone' | 'busy';

/**
 * Makes one attempt at a delivery: claims it with a guarded update (so one
 * attempt runs at a time, whichever worker holds the job), POSTs the signed
 * body, and records the attempt. `retryInMs` is when the next attempt comes
 * after a failure, null when this was the last (the delivery is then FAILED).
 * 'gone' means there is nothing to do (delivered, failed for good, or its
 * webhook deleted); 'busy' that another attempt is under way.
 */
export async function attemptWebhookDelivery(root: ContextRoot, deliveryId: string, retryInMs: number | null): Promise<DeliveryOutcome> {
  const em = root.em.fork();
  const [claimed] = await em.execute<{ body: string; url: string; secret: string; event_type: string }[]>(
    `update webhook_delivery d set locked_until = now() + interval '${ATTEMPT_LEASE_SECONDS} seconds'
       from webhook w
      where d.id = ? and w.id = d.webhook_id and d.status in ('PENDING', 'RETRYING') and (d.locked_until is null or d.locked_until < now())
      returning d.body, d.event_type, w.url, w.secret`,
    [deliveryId],
  );
  if (!claimed) {
    const [open] = await em.execute<{ id: string }[]>(`select id from webhook_delivery where id = ? and status in ('PENDING', 'RETRYING')`, [deliveryId]);
    return open ? 'busy' : 'gone';
  }
  const now = root.clock.now();
  const timestamp = Math.floor(now.getTime() / 1000);
  const started = Date.now();
  let statusCode: number | null = null;
  let error: string | null = null;
  try {
    const response = await fetch(claimed.url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'booking-service-webhooks/1',
        [SIGNATURE_HEADER]: signWebhookBody(claimed.secret, timestamp, claimed.body),
        [DELIVERY_HEADER]: deliveryId,
        [EVENT_HEADER]: claimed.event_type,
      },
      body: claimed.body,
    });
    statusCode = response.status;
    await response.body?.cancel();
    if (statusCode < 200 || statusCode >= 300) error = `answered ${statusCode}`;
  } catch (failure) {
    const cause = (failure as { cause?: { code?: string; message?: string } }).cause;
    error = (cause?.code ?? cause?.message ?? (failure instanceof Error ? failure.message : String(failure))) || 'request failed';
  }
  const attempt: WebhookAttempt = { at: now.toISOString(), statusCode, error, durationMs: Date.now() - started };
  const delivered = error === null;
  const status = delivered ? 'SUCCEEDED' : retryInMs === null ? 'FAILED' : 'RETRYING';
  await em.execute(
    `update webhook_delivery
        set attempts = attempts + 1, attempt_log = attempt_log || ?::jsonb, status = ?, locked_until = null,
            next_attempt_at = case when ? = 'RETRYING' then now() + (? * interval '1 millisecond') else null end,
            delivered_at = case when ? = 'SUCCEEDED' then ?::timestamptz else null end
      where id = ?`,
    [JSON.stringify([attempt]), status, status, retryInMs ?? 0, status, now, deliveryId],
  );
  return delivered ? 'delivered' : 'failed';
}

/** How long finished deliveries (SUCCEEDED, FAILED) stay listed before the worker deletes them. */
export const WEBHOOK_DELIVERY_RETENTION_MS = 30 * 24 * 3600_000;

/** Deletes up to `limit` finished deliveries created before `before`; returns how many went. */
export async function pruneWebhookDeliveries(root: ContextRoot, before: Date, limit = 5000): Promise<number> {
  const deleted = await root.em.fork().execute<{ id: string }[]>(
    `delete from webhook_delivery where id in (
       select id from webhook_delivery where created_at < ? and status in ('SUCCEEDED', 'FAILED') order by created_at limit ?
     ) returning id`,
    [before, limit],
  );
  return deleted.length;
}

/**
 * Deliveries that should have been attempted a while ago but are not under
 * way: their job was lost (e.g. with Redis). The worker queues them again
 * under the same job id, which BullMQ ignores while the job still exists.
 */
export async function overdueWebhookDeliveries(root: ContextRoot, staleMs: number, limit = 500): Promise<string[]> {
  const rows = await root.em.fork().execute<{ id: string }[]>(
    `select id from webhook_delivery
      where status in ('PENDING', 'RETRYING') and coalesce(next_attempt_at, created_at) < now() - (? * interval '1 millisecond')
        and (locked_until is null or locked_until < now())
      order by coalesce(next_attempt_at, created_at) limit ?`,
    [staleMs, limit],
  );
  return rows.map((row) => row.id);
}
