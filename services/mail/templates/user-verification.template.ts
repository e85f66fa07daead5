import type { Context } from '../../kernel/context.js';
import type { MailJob } from '../../kernel/jobs.js';
import { User } from '../../users/user.entity.js';
import type { RenderedMail } from './render.js';

/** Asks a user found by e-mail to confirm the address again. */
export async function renderUserVerification(ctx: Context, job: MailJob): Promise<RenderedMail | null> {
  const user = await ctx.em.findOne(User, { id: job.params.userId! });
  if (!user?.emailVerificationToken) return null;
  const link = `${ctx.config.publicBaseUrl}/verify-email?token=${encodeURIComponent(user.emailVerificationToken)}`;
  const name = [user.firstName, user.lastName].filter(Boolean).join(' ') || user.email;
  if (user.language === 'en') {
    return {
      to: user.email,
      subject: 'Please confirm your e-mail address',
      text: `Hello ${name},\n\nplease confirm your e-mail address by opening this link:\n${link}\n`,
    };
  }
  return {
    to: user.email,
    subject: 'Bitte bestätigen Sie Ihre E-Mail-Adresse',
    text: `Hallo ${name},\n\nbitte bestätigen Sie Ihre E-Mail-Adresse über diesen Link:\n${link}\n`,
  };
}
