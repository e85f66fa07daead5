import type { Context } from '../../kernel/context.js';
import type { MailJob } from '../../kernel/jobs.js';
import type { RenderedMail } from './layout.js';
import { customerName, loadParticipationMail, providerMail, subjectFacts } from './participation-mail.js';

/** To the provider after a consumer asked for an appointment (process REQUESTED): please confirm or decline. */
export async function renderProviderBookingRequest(ctx: Context, job: MailJob): Promise<RenderedMail | null> {
  const data = await loadParticipationMail(ctx, job);
  if (!data) return null;
  const de = data.providerContact.language === 'de';
  const who = customerName(data);
  return providerMail(data, {
    subject: de ? `Neue Terminanfrage: ${who}, ${subjectFacts(data, 'de')}` : `New appointment request: ${who}, ${subjectFacts(data, 'en')}`,
    paragraphs: [
      de
        ? `${who} fragt einen Termin an. Bitte bestätigen Sie die Anfrage oder lehnen Sie sie ab.`
        : `${who} asks for an appointment. Please confirm or decline the request.`,
    ],
    quoteLabel: de ? 'Nachricht des Kunden' : 'Message from the customer',
  });
}
