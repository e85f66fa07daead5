import type { Context } from '../../kernel/context.js';
import type { MailJob } from '../../kernel/jobs.js';
import type { RenderedMail } from './layout.js';
import { consumerMail, loadParticipationMail, subjectFacts } from './participation-mail.js';

/**
 * To the customer when a CRM books the participation (RESERVED or REQUESTED
 * -> BOOKED), with the CRM's message and the calendar entry. Participations
 * from the public booking flow also get their cancel link again; customers a
 * CRM added cancel through the CRM.
 */
export async function renderParticipationBooked(ctx: Context, job: MailJob): Promise<RenderedMail | null> {
  const data = await loadParticipationMail(ctx, job);
  const consumer = data?.consumer;
  if (!data || !consumer) return null;
  const provider = data.provider.name;
  const de = consumer.language === 'de';
  return consumerMail(ctx, data, consumer, {
    subject: de ? `Termin bestätigt: ${subjectFacts(data, 'de')}` : `Appointment confirmed: ${subjectFacts(data, 'en')}`,
    paragraphs: [de ? `${provider} hat Ihren Termin bestätigt.` : `${provider} has confirmed your appointment.`],
    quoteLabel: de ? `Nachricht von ${provider}` : `Message from ${provider}`,
    link: data.participation.channelKey ? 'cancel' : null,
    invite: 'REQUEST',
  });
}
