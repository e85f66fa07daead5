import type { Context } from '../../kernel/context.js';
import type { MailJob } from '../../kernel/jobs.js';
import type { RenderedMail } from './layout.js';
import { customerName, loadParticipationMail, providerMail, subjectFacts } from './participation-mail.js';

/** To the provider when a consumer cancels its booking (or withdraws its request) with the cancel link. */
export async function renderProviderBookingCancelled(ctx: Context, job: MailJob): Promise<RenderedMail | null> {
  const data = await loadParticipationMail(ctx, job);
  if (!data) return null;
  const de = data.providerContact.language === 'de';
  const who = customerName(data);
  return providerMail(data, {
    subject: de ? `Buchung storniert: ${who}, ${subjectFacts(data, 'de')}` : `Booking cancelled: ${who}, ${subjectFacts(data, 'en')}`,
    paragraphs: [de ? `${who} hat die Teilnahme an diesem Termin storniert.` : `${who} has cancelled their place in this appointment.`],
    quoteLabel: de ? 'Nachricht des Kunden' : 'Message from the customer',
  });
}
