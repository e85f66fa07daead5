import type { Job, Queue } from 'bullmq';
import type { ContextRoot } from '../services/kernel/context.js';
import { attemptWebhookDelivery, overdueWebhookDeliveries } from '../services/webhooks/webhook-delivery.service.js';
import type { WebhookJob } from '../services/webhooks/webhook-events.js';
import { webhookJobIdFor } from './outbox-relay.js';

/**
 * One attempt per run. A failed attempt throws, so BullMQ retries with its
 * exponential back-off; the delivery records when that will be (the delay
 * BullMQ computes: delay × 2^(failed attempts so far)).
 */
export function webhookProcessor(root: ContextRoot) {
  return async (job: Job<WebhookJob & { outboxId?: string }>): Promise<string> => {
    const attempts = job.opts.attempts ?? 1;
    const last = job.attemptsMade + 1 >= attempts;
    const backoff = job.opts.backoff;
    const baseDelay = typeof backoff === 'object' ? (backoff.delay ?? 0) : (backoff ?? 0);
    const retryInMs = last ? null : baseDelay * 2 ** job.attemptsMade;
    // Lines the attempt logs name the job (a child logger per job).
    const jobRoot = { ...root, logger: root.logger.child({ jobId: job.id, queue: job.queueName }) };
    const outcome = await attemptWebhookDelivery(jobRoot, job.data.deliveryId, retryInMs);
    if (outcome === 'failed' && !last) throw new Error('webhook endpoint did not accept the delivery');
    if (outcome === 'busy') throw new Error('another attempt at this delivery is under way');
    return outcome;
  };
}

/**
 * Queues again the overdue deliveries whose job is gone (Redis lost it) or
 * ended without finishing the delivery (a worker died mid-attempt). A job
 * still waiting, delayed or running is left to BullMQ.
 */
export async function recoverLostWebhookJobs(root: ContextRoot, queue: Queue, staleMs: number): Promise<number> {
  let requeued = 0;
  for (const deliveryId of await overdueWebhookDeliveries(root, staleMs)) {
    const jobId = webhookJobIdFor(deliveryId);
    const job = await queue.getJob(jobId);
    if (job) {
      const state = await job.getState();
      if (state !== 'completed' && state !== 'failed') continue;
      await job.remove();
    }
    await queue.add(queue.name, { deliveryId }, { jobId });
    requeued++;
  }
  if (requeued) root.logger.warn('queued webhook deliveries whose jobs were lost', { requeued });
  return requeued;
}
