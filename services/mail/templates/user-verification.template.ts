import type { Context } from '../../kernel/context.js';
import type { MailJob } from '../../kernel/jobs.js';
import { User } from '../../users/user.entity.js';
import { composeMail, mailLanguage, type RenderedMail } from './layout.js';

/** Asks a user found by e-mail to confirm the address again, in the user's language. */
export async function renderUserVerification(ctx: Context, job: MailJob): Promise<RenderedMail | null> {
  const user = await ctx.em.findOne(User, { id: job.params.userId! });
  // No token: verified meanwhile, or a newer mail carries the current link.
  if (!user?.emailVerificationToken) return null;
  const link = `${ctx.config.publicBaseUrl}/verify-email?token=${encodeURIComponent(user.emailVerificationToken)}`;
  const name = [user.firstName, user.lastName].filter(Boolean).join(' ') || user.email;
  if (mailLanguage(user.language) === 'en') {
    return composeMail({
      to: user.email,
      subject: 'Please confirm your e-mail address',
      greeting: `Hello ${name},`,
      paragraphs: ['Please confirm that this e-mail address belongs to you.'],
      link: { label: 'Confirm e-mail address', url: link },
      closing: ['Kind regards', 'Your booking service'],
    });
  }
  return composeMail({
    to: user.email,
    subject: 'Bitte bestätigen Sie Ihre E-Mail-Adresse',
    greeting: `Guten Tag ${name},`,
    paragraphs: ['bitte bestätigen Sie, dass diese E-Mail-Adresse Ihnen gehört.'],
    link: { label: 'E-Mail-Adresse bestätigen', url: link },
    closing: ['Viele Grüße', 'Ihr Buchungsservice'],
  });
}
