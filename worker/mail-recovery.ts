import type { Queue } from 'bullmq';
import { type ContextRoot, createContext } from '../services/kernel/context.js';
import { findStalledMails, markMailFailed, requeueMail } from '../services/mail/mail-delivery.service.js';
import { mailJobIdFor } from './outbox-relay.js';

/**
 * Finds mails that stopped moving (QUEUED, SENDING or RETRYING for longer
 * than `staleMs`) whose BullMQ job is gone — Redis lost its data, e.g.
 * restarted without persistence — and queues them again through the outbox.
 * A job that still exists is left to BullMQ (waiting, delayed or stalled
 * jobs come back by themselves); one BullMQ failed for good is recorded FAILED.
 */
export async function recoverLostMails(root: ContextRoot, queue: Queue, staleMs: number): Promise<{ requeued: number; failed: number }> {
  const ctx = createContext(root, { actor: { kind: 'system', name: 'mail-recovery' } });
  let requeued = 0;
  let failed = 0;
  for (const mail of await findStalledMails(ctx, staleMs)) {
    const job = await queue.getJob(mailJobIdFor(mail.id));
    if (job) {
      if ((await job.getState()) === 'failed') {
        await markMailFailed(ctx, { ...mail, lastError: job.failedReason || 'the mail job failed' });
        failed++;
      }
      continue;
    }
    if (await requeueMail(ctx, mail.id)) {
      requeued++;
    } else {
      await markMailFailed(ctx, { ...mail, lastError: 'the queued job was lost and the erased customer’s address is no longer kept' });
      failed++;
    }
  }
  if (requeued || failed) root.logger.warn('recovered mails whose jobs were lost', { requeued, failed });
  return { requeued, failed };
}
