import { type Job, UnrecoverableError } from 'bullmq';
import { createContext, type ContextRoot } from '../services/kernel/context.js';
import type { MailJob } from '../services/kernel/jobs.js';
import { metrics } from '../services/kernel/metrics.js';
import { markMailFailed } from '../services/mail/mail-delivery.service.js';
import { deliverMail, PermanentMailError } from '../services/mail/mail.service.js';
import type { MailTransport } from '../services/mail/mail-transport.js';

export type MailJobData = MailJob & { outboxId: string; erased?: boolean };

/** Sends one mail; BullMQ retries with backoff, the last failure stays recorded as FAILED. */
export function mailProcessor(root: ContextRoot, transport: MailTransport) {
  return async (job: Job<MailJobData>) => {
    const { outboxId, erased: _erased, ...mail } = job.data;
    if (!outboxId) throw new UnrecoverableError('mail job without outboxId');
    const attempts = job.opts.attempts ?? 1;
    const ctx = createContext(root, { actor: { kind: 'system', name: 'mail' }, requestId: job.id, log: { jobId: job.id, queue: job.queueName, template: job.data.template } });
    try {
      const outcome = await deliverMail(ctx, transport, outboxId, mail, { last: job.attemptsMade + 1 >= attempts });
      await forgetRecipient(job);
      return outcome;
    } catch (error) {
      if (error instanceof PermanentMailError) throw new UnrecoverableError(error.message);
      throw error;
    }
  };
}

/**
 * Called when a mail job failed. Once BullMQ gives up on it (out of
 * attempts, or unrecoverable) the mail is recorded FAILED with the reason,
 * also when the failure came before deliverMail could record anything.
 */
export async function onMailJobFailed(root: ContextRoot, job: Job<MailJobData> | undefined, error: Error): Promise<void> {
  if (!job?.data.outboxId) return;
  const final = Boolean(job.finishedOn) || error instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
  metrics.mailFailures.inc({ final: String(final) });
  if (!final) return;
  const ctx = createContext(root, { actor: { kind: 'system', name: 'mail' }, requestId: job.id, log: { jobId: job.id, queue: job.queueName, template: job.data.template } });
  await markMailFailed(ctx, {
    id: job.data.outboxId,
    template: job.data.template,
    participationId: job.data.params?.participationId ?? null,
    lastError: scrubbed(job.data, error.message),
  });
  await forgetRecipient(job);
}

/** A farewell mail to an erased customer keeps its address in the job only until the job is done. */
async function forgetRecipient(job: Job<MailJobData>): Promise<void> {
  if (!job.data.personal || !job.data.recipient) return;
  const { recipient: _recipient, message: _message, ...rest } = job.data;
  await job.updateData({ ...rest, erased: true } as MailJobData).catch(() => undefined);
}

const scrubbed = (data: MailJobData, text: string): string =>
  data.personal && data.recipient?.email ? text.split(data.recipient.email).join('erased') : text;
