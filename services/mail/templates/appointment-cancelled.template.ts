import type { Context } from '../../kernel/context.js';
import type { MailJob } from '../../kernel/jobs.js';
import type { RenderedMail } from './layout.js';
import { consumerMail, loadParticipationMail, subjectFacts } from './participation-mail.js';

/** To each participant when the provider cancels the whole appointment, with its message and a calendar cancellation. */
export async function renderAppointmentCancelled(ctx: Context, job: MailJob): Promise<RenderedMail | null> {
  const data = await loadParticipationMail(ctx, job);
  const consumer = data?.consumer;
  if (!data || !consumer) return null;
  const provider = data.provider.name;
  const de = consumer.language === 'de';
  return consumerMail(ctx, data, consumer, {
    subject: de ? `Termin abgesagt: ${subjectFacts(data, 'de')}` : `Appointment cancelled: ${subjectFacts(data, 'en')}`,
    paragraphs: [
      de ? `${provider} hat diesen Termin abgesagt. Er findet nicht statt.` : `${provider} has cancelled this appointment. It will not take place.`,
    ],
    quoteLabel: de ? `Nachricht von ${provider}` : `Message from ${provider}`,
    invite: 'CANCEL',
  });
}
