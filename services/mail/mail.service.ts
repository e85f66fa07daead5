import type { Context } from '../kernel/context.js';
import type { MailJob } from '../kernel/jobs.js';
import { recordDelivery, revertSent } from './mail-delivery.service.js';
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
 * Renders and sends the mail an outbox row asked for, at most once: the
 * mail_delivery row (keyed by the outbox id) is SENDING while an attempt
 * transfers the message and becomes SENT in the instant before the transport
 * completes it (SMTP: before the final "." of DATA), so
 * - a job that runs again finds SENT (or SKIPPED) and sends nothing;
 * - an attempt that died while SENDING never completed its message (the
 *   server discards an unfinished DATA), so the next attempt sends it once;
 * - two attempts at once (a job whose lock was lost) cannot both complete:
 *   the second finds SENT at its hand-over and aborts.
 * Left open: a crash in the microseconds between the SENT commit and the
 * "." (the mail is recorded SENT but lost), and a refusal of the finished
 * message that arrives after a crash.
 */
export async function deliverMail(ctx: Context, transport: MailTransport, outboxId: string, job: MailJob, attempt: MailAttempt): Promise<'sent' | 'skipped'> {
  const base = { id: outboxId, template: job.template, participationId: job.params.participationId ?? null };
  const scrub = (text: string) => (job.personal && job.recipient?.email ? text.split(job.recipient.email).join(ERASED) : text);

  // No read of the state first: every write below leaves a SENT or SKIPPED mail as it is and says so ('unchanged'),
  // so a job run again for a finished mail only renders it once more and sends nothing.
  let rendered;
  try {
    rendered = await renderMail(ctx, job);
  } catch (error) {
    const permanent = error instanceof UnknownTemplateError;
    const reason = scrub(`rendering failed: ${messageOf(error)}`);
    const recorded = await recordDelivery(ctx, { ...base, status: permanent || attempt.last ? 'FAILED' : 'RETRYING', lastError: reason, startsAttempt: true });
    if (recorded === 'unchanged') return 'skipped';
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
    // SENDING means the mail was not handed over (see below), so sending it now cannot double it.
    ctx.logger.info('an earlier attempt of this mail stopped before handing it over; sending it now', { outboxId, template: job.template });
  }

  const messageId = `<mail-${outboxId}@booking.localhost>`;
  let handedOver = false;
  let doneElsewhere = false;
  // Recorded SENT right before the transport completes the delivery (the final "." of SMTP DATA):
  // a crash before it leaves an unfinished message the server discards; one after it, a sent mail.
  const handOver = async () => {
    if ((await recordDelivery(ctx, { ...base, recipient, status: 'SENT', messageId, lastError: null })) === 'unchanged') {
      doneElsewhere = true;
      throw new Error('the mail was completed by another attempt');
    }
    handedOver = true;
  };
  try {
    await transport.send(
      {
        from: ctx.config.mailFrom,
        to: rendered.to,
        subject: rendered.subject,
        text: rendered.text,
        html: rendered.html,
        attachments: rendered.attachments,
        messageId,
        headers: { 'X-Booking-Template': job.template },
      },
      handOver,
    );
  } catch (error) {
    if (doneElsewhere) return 'skipped';
    const permanent = isPermanentMailError(error);
    const reason = scrub(messageOf(error));
    const status = permanent || attempt.last ? 'FAILED' : 'RETRYING';
    // Refused after the hand-over (the server's answer to "."): the mail is not sent after all.
    if (handedOver) await revertSent(ctx, outboxId, status, reason);
    else await recordDelivery(ctx, { ...base, recipient, status, lastError: reason });
    throw permanent ? new PermanentMailError(reason) : error;
  }
  // A transport without a completing step (tests' capturing transports) did not call handOver: record now,
  // and keep trying for a while, since failing here would send the mail again.
  if (!handedOver) await persistently(() => recordDelivery(ctx, { ...base, recipient, status: 'SENT', messageId, lastError: null }));
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
