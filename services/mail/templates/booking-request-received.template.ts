import type { Context } from '../../kernel/context.js';
import type { MailJob } from '../../kernel/jobs.js';
import type { RenderedMail } from './layout.js';
import { consumerMail, loadParticipationMail, subjectFacts } from './participation-mail.js';

/**
 * To the consumer after a booking request (process REQUESTED, or a CRM
 * adding a REQUESTED participation): not confirmed yet, so no calendar entry.
 * Requests from the public booking flow get the cancel link, which withdraws
 * the request; customers a CRM added cancel through the CRM, as in
 * participation-booked (a link here would outlive the confirmation).
 */
export async function renderBookingRequestReceived(ctx: Context, job: MailJob): Promise<RenderedMail | null> {
  const data = await loadParticipationMail(ctx, job);
  const consumer = data?.consumer;
  if (!data || !consumer) return null;
  const provider = data.provider.name;
  const de = consumer.language === 'de';
  return consumerMail(ctx, data, consumer, {
    subject: de ? `Ihre Terminanfrage: ${subjectFacts(data, 'de')}` : `Your appointment request: ${subjectFacts(data, 'en')}`,
    paragraphs: [
      de
        ? `vielen Dank für Ihre Anfrage. ${provider} bestätigt den Termin noch; Sie erhalten dann eine weitere E-Mail.`
        : `Thank you for your request. ${provider} still has to confirm the appointment; you will get another e-mail then.`,
    ],
    quoteLabel: de ? 'Ihre Nachricht' : 'Your message',
    link: data.participation.channelKey ? 'withdraw' : null,
  });
}
