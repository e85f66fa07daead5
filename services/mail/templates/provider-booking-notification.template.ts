import type { Context } from '../../kernel/context.js';
import type { MailJob } from '../../kernel/jobs.js';
import type { RenderedMail } from './layout.js';
import { customerName, loadParticipationMail, providerMail, subjectFacts } from './participation-mail.js';

/** To the provider after a consumer booked (process IMMEDIATE), with the consumer's message. */
export async function renderProviderBookingNotification(ctx: Context, job: MailJob): Promise<RenderedMail | null> {
  const data = await loadParticipationMail(ctx, job);
  if (!data) return null;
  const de = data.providerContact.language === 'de';
  const who = customerName(data);
  return providerMail(data, {
    subject: de ? `Neue Buchung: ${who}, ${subjectFacts(data, 'de')}` : `New booking: ${who}, ${subjectFacts(data, 'en')}`,
    paragraphs: [de ? `${who} hat einen Termin gebucht.` : `${who} has booked an appointment.`],
    quoteLabel: de ? 'Nachricht des Kunden' : 'Message from the customer',
  });
}
