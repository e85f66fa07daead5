import { type Job, UnrecoverableError } from 'bullmq';
import { createContext, type ContextRoot } from '../services/kernel/context.js';
import type { MailJob } from '../services/kernel/jobs.js';
import { deliverMail } from '../services/mail/mail.service.js';
import type { MailTransport } from '../services/mail/mail-transport.js';

/** Sends one mail; BullMQ retries with backoff, the last failure stays recorded as FAILED. */
export function mailProcessor(root: ContextRoot, transport: MailTransport) {
  return async (job: Job<MailJob & { outboxId: string }>) => {
    const { outboxId, ...mail } = job.data;
    if (!outboxId) throw new UnrecoverableError('mail job without outboxId');
    const attempts = job.opts.attempts ?? 1;
    const ctx = createContext(root, { actor: { kind: 'system', name: 'mail' }, requestId: job.id });
    return deliverMail(ctx, transport, outboxId, mail, { number: job.attemptsMade + 1, last: job.attemptsMade + 1 >= attempts });
  };
}
