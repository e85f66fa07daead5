import type { Context } from '../kernel/context.js';
import type { MailJob } from '../kernel/jobs.js';
import { MailDelivery } from './mail-delivery.entity.js';
import type { MailTransport } from './mail-transport.js';
import { renderMail } from './templates/render.js';

export class PermanentMailError extends Error {}

/**
 * Renders and sends the mail an outbox row asked for, at most once: a row
 * already marked SENT is skipped, so a job that runs again sends nothing.
 */
export async function deliverMail(
  ctx: Context,
  transport: MailTransport,
  outboxId: string,
  job: MailJob,
  attempt: { number: number; last: boolean },
): Promise<'sent' | 'skipped'> {
  const em = ctx.em;
  const delivery = await em.findOne(MailDelivery, { id: outboxId });
  if (delivery?.status === 'SENT') return 'skipped';
  const rendered = await renderMail(ctx, job);
  if (!rendered) {
    // Nothing to send any more (e.g. the customer was erased meanwhile).
    return 'skipped';
  }
  const record =
    delivery ??
    em.create(MailDelivery, {
      id: outboxId,
      template: job.template,
      recipient: rendered.to,
      participationId: job.params.participationId ?? null,
      status: 'RETRYING',
    });
  record.attempts = attempt.number;
  try {
    const { messageId } = await transport.send({
      from: ctx.config.mailFrom,
      to: rendered.to,
      subject: rendered.subject,
      text: rendered.text,
      html: rendered.html,
      attachments: rendered.attachments,
      messageId: `<mail-${outboxId}@booking.localhost>`,
    });
    record.status = 'SENT';
    record.messageId = messageId;
    record.lastError = null;
    record.updatedAt = new Date();
    await em.persistAndFlush(record);
    return 'sent';
  } catch (error) {
    record.status = attempt.last ? 'FAILED' : 'RETRYING';
    record.lastError = error instanceof Error ? error.message : String(error);
    record.updatedAt = new Date();
    await em.persistAndFlush(record);
    throw error;
  }
}

/** Delivery records of the mails sent about one participation. */
export async function mailDeliveriesOf(ctx: Context, participationId: string): Promise<MailDelivery[]> {
  return ctx.em.find(MailDelivery, { participationId }, { orderBy: { id: 'asc' } });
}
