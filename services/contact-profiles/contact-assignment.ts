import type { Context } from '../kernel/context.js';
import { requireCrm } from '../kernel/context.js';
import { validationError } from '../kernel/errors.js';
import type { Provider } from '../providers/provider.entity.js';
import { isStaff } from '../providers/provider.service.js';
import { User } from '../users/user.entity.js';
import { ContactProfile } from './contact-profile.entity.js';

/**
 * Resolves `contact` and `contactProfileReference` of a resource or an
 * appointment: the contact must be staff of the provider, and is required
 * when a profile is given; the profile must belong to that user and apply to
 * this provider (a provider profile of another provider is refused).
 */
export async function resolveContact(
  ctx: Context,
  provider: Provider,
  contactReference: string | null | undefined,
  contactProfileReference: string | null | undefined,
): Promise<{ contact: User | null; contactProfile: ContactProfile | null }> {
  const crm = requireCrm(ctx);
  if (contactProfileReference && !contactReference) throw validationError('contact is required when contactProfileReference is given');
  if (!contactReference) return { contact: null, contactProfile: null };
  const contact = await ctx.em.findOne(User, { crm, reference: contactReference });
  if (!contact) throw validationError(`contact: no user with reference ${contactReference}`);
  if (!(await isStaff(ctx, provider, contact))) throw validationError(`contact: user ${contactReference} is not staff of provider ${provider.reference}`);
  if (!contactProfileReference) return { contact, contactProfile: null };
  const contactProfile = await ctx.em.findOne(ContactProfile, { crm, reference: contactProfileReference });
  if (!contactProfile) throw validationError(`contactProfileReference: no contact profile ${contactProfileReference}`);
  if (contactProfile.user.id !== contact.id) throw validationError(`contactProfileReference: profile ${contactProfileReference} does not belong to contact ${contactReference}`);
  if (contactProfile.provider && contactProfile.provider.id !== provider.id) {
    throw validationError(`contactProfileReference: profile ${contactProfileReference} is not valid for provider ${provider.reference}`);
  }
  return { contact, contactProfile };
}
