import type { Context } from '../kernel/context.js';
import type { MailJob } from '../kernel/jobs.js';
import { MailDelivery } from './mail-delivery.entity.js';
import { recordDelivery } from './mail-delivery.service.js';
import { isPermanentMailError, type MailTransport } from './mail-transport.js';
import { renderMail, UnknownTemplateError } from './templates/render.js';

/** A failure no retry can fix (SMTP 5xx, unknown template): the job ends at once, recorded FAILED. */
export class PermanentMailError extends Error {}

/** Where the erased customer's address is kept out of the delivery record. */
const ERASED = 'erased';

export interface MailAttempt {
  /** No retry follows if this one fails. */
  last: boolean;
}

/**
 * Renders and sends the mail an outbox row asked for. The mail_delivery row
 * (keyed by the outbox id) makes a job that runs again send nothing once the
 * mail is SENT or SKIPPED. An attempt is marked SENDING before the SMTP
 * exchange, so an attempt that died in it is visible; the next attempt sends
 * again with the same Message-ID (the one case in which a receiver can get a
 * mail twice: the worker died after the server accepted it and before the
 * row said SENT).
 */
export async function deliverMail(ctx: Context, transport: MailTransport, outboxId: string, job: MailJob, attempt: MailAttempt): Promise<'sent' | 'skipped'> {
  const base = { id: outboxId, template: job.template, participationId: job.params.participationId ?? null };
  const scrub = (text: string) => (job.personal && job.recipient?.email ? text.split(job.recipient.email).join(ERASED) : text);

  const known = await ctx.em.findOne(MailDelivery, { id: outboxId }, { fields: ['status'] });
  if (known?.status === 'SENT' || known?.status === 'SKIPPED') return 'skipped';

  let rendered;
  try {
    rendered = await renderMail(ctx, job);
  } catch (error) {
    const permanent = error instanceof UnknownTemplateError;
    const reason = scrub(`rendering failed: ${messageOf(error)}`);
    await recordDelivery(ctx, { ...base, status: permanent || attempt.last ? 'FAILED' : 'RETRYING', lastError: reason, startsAttempt: true });
    throw permanent ? new PermanentMailError(reason) : error;
  }
  if (!rendered) {
    await recordDelivery(ctx, { ...base, recipient: '', status: 'SKIPPED', lastError: 'nobody to write to (no e-mail address, or the customer was erased)', startsAttempt: true });
    return 'skipped';
  }

  const recipient = job.personal ? ERASED : rendered.to;
  const claim = await recordDelivery(ctx, { ...base, recipient, status: 'SENDING', startsAttempt: true });
  if (claim === 'unchanged') return 'skipped';
  if (claim === 'taken-over') {
    ctx.logger.warn('an earlier attempt of this mail stopped while sending; sending it again with the same Message-ID', { outboxId, template: job.template });
  }

  let messageId: string;
  try {
    ({ messageId } = await transport.send({
      from: ctx.config.mailFrom,
      to: rendered.to,
      subject: rendered.subject,
      text: rendered.text,
      html: rendered.html,
      attachments: rendered.attachments,
      messageId: `<mail-${outboxId}@booking.localhost>`,
      headers: { 'X-Booking-Template': job.template },
    }));
  } catch (error) {
    const permanent = isPermanentMailError(error);
    const reason = scrub(messageOf(error));
    await recordDelivery(ctx, { ...base, recipient, status: permanent || attempt.last ? 'FAILED' : 'RETRYING', lastError: reason });
    throw permanent ? new PermanentMailError(reason) : error;
  }
  // The mail is out: failing now would send it again, so keep trying to record that for a while (PostgreSQL may blink).
  await persistently(() => recordDelivery(ctx, { ...base, recipient, status: 'SENT', messageId, lastError: null }));
  return 'sent';
}

async function persistently<T>(work: () => Promise<T>, attempts = 20, delayMs = 500): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
