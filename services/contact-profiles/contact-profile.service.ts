import { z } from 'zod';
import { type Context, inTransaction, requireCrm } from '../kernel/context.js';
import { DomainError, notFound, validationError } from '../kernel/errors.js';
import { emailAddress, optionalText, parseInput, requiredText } from '../kernel/validation.js';
import { getProvider } from '../providers/provider.service.js';
import { User } from '../users/user.entity.js';
import { getUser } from '../users/user.service.js';
import { CONTACT_CHANNEL_TYPES, ContactChannel, type ContactChannelType } from './contact-channel.entity.js';
import { ContactProfile } from './contact-profile.entity.js';

/** Channel types a consumer may see, in the order the booking flow prefers them. */
export const CUSTOMER_VISIBLE_CHANNEL_TYPES: readonly ContactChannelType[] = ['mobile', 'phone', 'email'];

const PHONE_NUMBER = /^\+?[0-9][0-9 ()\/.-]{2,31}$/;

const channelInput = z
  .object({
    label: optionalText(),
    type: z.enum(CONTACT_CHANNEL_TYPES),
    value: requiredText(1024),
  })
  .superRefine((channel, issues) => {
    // The e-mail channel is used for transactional e-mails and numbers are dialled, so both must be usable.
    if (channel.type === 'email' && !emailAddress().safeParse(channel.value).success) {
      issues.addIssue({ code: 'custom', path: ['value'], message: 'must be a valid e-mail address for type email' });
    }
    if ((channel.type === 'mobile' || channel.type === 'phone') && !PHONE_NUMBER.test(channel.value)) {
      issues.addIssue({ code: 'custom', path: ['value'], message: `must be a phone number for type ${channel.type}` });
    }
  });

const channelsInput = z
  .array(channelInput)
  .max(CONTACT_CHANNEL_TYPES.length)
  .superRefine((channels, issues) => {
    const seen = new Set<string>();
    channels.forEach((channel, index) => {
      if (seen.has(channel.type)) {
        issues.addIssue({ code: 'custom', path: [index, 'type'], message: `${channel.type} occurs more than once; one channel per type` });
      }
      seen.add(channel.type);
    });
  });

export const generalProfileInput = z.object({ name: requiredText(), contactChannels: channelsInput });
export const providerProfileInput = z.object({
  reference: requiredText(),
  userReference: requiredText(),
  providerReference: requiredText(),
  name: requiredText(),
  contactChannels: channelsInput,
});

type ChannelInput = z.output<typeof channelInput>;

/** The user's general profile; 404 when the user is unknown or has none. */
export async function getGeneralContactProfile(ctx: Context, userReference: string): Promise<ContactProfile> {
  const user = await getUser(ctx, userReference);
  const profile = await ctx.em.findOne(ContactProfile, { crm: requireCrm(ctx), user, provider: null }, { populate: ['user', 'channels'] });
  if (!profile) throw notFound('General contact profile of user', userReference);
  return profile;
}

/** Creates or replaces the user's general profile; channels are matched by type (see replaceChannels). */
export async function saveGeneralContactProfile(ctx: Context, userReference: string, raw: unknown): Promise<ContactProfile> {
  const crm = requireCrm(ctx);
  const input = parseInput(generalProfileInput, raw);
  return inTransaction(ctx, async (tx) => {
    const user = await getUser(tx, userReference);
    const profile =
      (await tx.em.findOne(ContactProfile, { crm, user, provider: null }, { populate: ['user', 'channels'] })) ??
      tx.em.create(ContactProfile, { crm, user, provider: null, reference: null, name: input.name });
    profile.name = input.name;
    replaceChannels(tx, profile, input.contactChannels);
    await tx.em.flush();
    return profile;
  });
}

/**
 * Creates or updates a provider-specific profile (`created` tells which). The
 * body's providerReference must name the provider of the path; a reference
 * held by another provider or user is a 409.
 */
export async function saveContactProfile(ctx: Context, providerReference: string, raw: unknown): Promise<{ profile: ContactProfile; created: boolean }> {
  const crm = requireCrm(ctx);
  const input = parseInput(providerProfileInput, raw);
  if (input.providerReference !== providerReference) {
    throw validationError(`providerReference (${input.providerReference}) must be the provider of the path (${providerReference})`);
  }
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const user = await tx.em.findOne(User, { crm, reference: input.userReference });
    if (!user) throw new DomainError('USER_NOT_FOUND', `no user found for userReference ${input.userReference}`);
    const existing = await tx.em.findOne(ContactProfile, { crm, reference: input.reference }, { populate: ['user', 'provider', 'channels'] });
    if (existing && existing.provider?.id !== provider.id) {
      throw new DomainError('CONFLICT', `Contact profile reference ${input.reference} is already used by another provider`);
    }
    if (existing && existing.user.id !== user.id) {
      throw new DomainError('CONFLICT', `Contact profile ${input.reference} belongs to another user; its user cannot be changed`);
    }
    const profile = existing ?? tx.em.create(ContactProfile, { crm, user, provider, reference: input.reference, name: input.name });
    profile.name = input.name;
    replaceChannels(tx, profile, input.contactChannels);
    await tx.em.flush();
    return { profile, created: !existing };
  });
}

/** A provider-specific profile by reference; 404 when unknown or another provider's. */
export async function getContactProfile(ctx: Context, providerReference: string, reference: string): Promise<ContactProfile> {
  const provider = await getProvider(ctx, providerReference);
  const profile = await ctx.em.findOne(ContactProfile, { crm: requireCrm(ctx), provider, reference }, { populate: ['user', 'provider', 'channels'] });
  if (!profile) throw notFound('Contact profile', reference);
  return profile;
}

/**
 * One channel per type: a type in the input that the profile has is updated,
 * a new type is added, a type the input leaves out is removed.
 */
function replaceChannels(tx: Context, profile: ContactProfile, channels: ChannelInput[]): void {
  const byType = new Map(profile.channels.getItems().map((channel) => [channel.type, channel]));
  for (const input of channels) {
    const channel = byType.get(input.type);
    if (channel) {
      channel.label = input.label ?? null;
      channel.value = input.value;
      byType.delete(input.type);
    } else {
      profile.channels.add(tx.em.create(ContactChannel, { profile, type: input.type, label: input.label ?? null, value: input.value }));
    }
  }
  for (const stale of byType.values()) profile.channels.remove(stale);
}

export interface ContactChannelView {
  label: string | null;
  type: ContactChannelType;
  value: string;
}

export interface GeneralContactProfileView {
  name: string;
  contactChannels: ContactChannelView[];
}

export interface ContactProfileView extends GeneralContactProfileView {
  reference: string | null;
  userReference: string | null;
  providerReference: string | null;
}

const channelOrder = (channel: ContactChannel) => CONTACT_CHANNEL_TYPES.indexOf(channel.type);

/** Name and channels, channels in the fixed order of the type list. Needs channels loaded. */
export const toGeneralContactProfileView = (profile: ContactProfile): GeneralContactProfileView => ({
  name: profile.name,
  contactChannels: profile.channels
    .getItems()
    .slice()
    .sort((a, b) => channelOrder(a) - channelOrder(b))
    .map((channel) => ({ label: channel.label, type: channel.type, value: channel.value })),
});

/** The provider-profile shape; needs user, provider and channels loaded. */
export const toContactProfileView = (profile: ContactProfile): ContactProfileView => ({
  reference: profile.reference,
  userReference: profile.user.reference,
  providerReference: profile.provider?.reference ?? null,
  ...toGeneralContactProfileView(profile),
});
