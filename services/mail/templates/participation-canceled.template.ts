import type { Context } from '../../kernel/context.js';
import type { MailJob } from '../../kernel/jobs.js';
import type { RenderedMail } from './layout.js';
import { consumerMail, loadParticipationMail, subjectFacts } from './participation-mail.js';

/**
 * To the customer when its participation is canceled (by a CRM, by its own
 * cancel link, or because the customer was deleted), with the message and a
 * calendar cancellation.
 */
export async function renderParticipationCanceled(ctx: Context, job: MailJob): Promise<RenderedMail | null> {
  const data = await loadParticipationMail(ctx, job);
  const consumer = data?.consumer;
  if (!data || !consumer) return null;
  const provider = data.provider.name;
  const de = consumer.language === 'de';
  return consumerMail(ctx, data, consumer, {
    subject: de ? `Termin storniert: ${subjectFacts(data, 'de')}` : `Appointment cancelled: ${subjectFacts(data, 'en')}`,
    paragraphs: [de ? 'Ihre Teilnahme an diesem Termin ist storniert.' : 'Your place in this appointment has been cancelled.'],
    quoteLabel: de ? `Nachricht von ${provider}` : `Message from ${provider}`,
    invite: 'CANCEL',
  });
}
