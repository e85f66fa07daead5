import type { Context } from '../../kernel/context.js';
import type { MailJob } from '../../kernel/jobs.js';
import type { RenderedMail } from './layout.js';
import { consumerMail, loadParticipationMail, subjectFacts } from './participation-mail.js';

/** To the consumer after a booking with process IMMEDIATE: confirmed, with cancel link and calendar entry. */
export async function renderBookingConfirmation(ctx: Context, job: MailJob): Promise<RenderedMail | null> {
  const data = await loadParticipationMail(ctx, job);
  const consumer = data?.consumer;
  if (!data || !consumer) return null;
  const de = consumer.language === 'de';
  return consumerMail(ctx, data, consumer, {
    subject: de ? `Buchungsbestätigung: ${subjectFacts(data, 'de')}` : `Booking confirmed: ${subjectFacts(data, 'en')}`,
    paragraphs: [de ? 'vielen Dank für Ihre Buchung. Ihr Termin ist bestätigt.' : 'Thank you for your booking. Your appointment is confirmed.'],
    quoteLabel: de ? 'Ihre Nachricht' : 'Your message',
    link: 'cancel',
    invite: 'REQUEST',
  });
}
