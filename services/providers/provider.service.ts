import { z } from 'zod';
import { Account } from '../accounts/account.entity.js';
import { parseBranch } from '../accounts/account.service.js';
import { type Context, inTransaction, requireCrm } from '../kernel/context.js';
import { DomainError, notFound } from '../kernel/errors.js';
import { findOneMapped } from '../kernel/sql.js';
import { timeZoneInput } from '../kernel/time-zone.js';
import { emailAddress, languageCode, optionalText, parseInput, requiredText } from '../kernel/validation.js';
import { User } from '../users/user.entity.js';
import { DEFAULT_TIME_ZONE, Provider } from './provider.entity.js';
import { StaffMembership } from './staff-membership.entity.js';

export const providerInput = z.object({
  reference: requiredText(),
  ownerReference: requiredText(),
  accountReference: requiredText(),
  name: requiredText(),
  email: emailAddress().nullish(),
  mobile: optionalText(64),
  phone: optionalText(64),
  impressum: optionalText(20_000),
  description: optionalText(20_000),
  branch: optionalText(64),
  subbranch: optionalText(),
  timeZone: timeZoneInput().nullish(),
  language: languageCode().nullish(),
});

/**
 * Creates a provider whose owner becomes its first staff member. A known
 * reference returns the existing provider unchanged (status 200), so a CRM
 * may repeat its set-up safely.
 */
export async function createProvider(ctx: Context, raw: unknown): Promise<{ provider: Provider; created: boolean }> {
  const crm = requireCrm(ctx);
  const input = parseInput(providerInput, raw);
  const branch = input.branch ? parseBranch(input.branch) : null;
  return inTransaction(ctx, async (tx) => {
    const existing = await tx.em.findOne(Provider, { crm, reference: input.reference });
    if (existing) return { provider: existing, created: false };
    const owner = await tx.em.findOne(User, { crm, reference: input.ownerReference });
    if (!owner) throw new DomainError('USER_NOT_FOUND', 'no user found for ownerReference');
    const account = await tx.em.findOne(Account, { crm, reference: input.accountReference });
    if (!account) throw new DomainError('NOT_FOUND', 'no account found for accountReference');
    const provider = tx.em.create(Provider, {
      crm,
      reference: input.reference,
      owner,
      account,
      name: input.name,
      email: input.email ?? null,
      mobile: input.mobile ?? null,
      phone: input.phone ?? null,
      impressum: input.impressum ?? null,
      description: input.description ?? null,
      branch,
      subbranch: input.subbranch ?? null,
      timeZone: input.timeZone ?? DEFAULT_TIME_ZONE,
      language: input.language ?? owner.language,
      createdAt: new Date(),
    });
    tx.em.create(StaffMembership, { provider, user: owner, role: 'OWNER', createdAt: new Date() });
    await tx.em.flush();
    return { provider, created: true };
  });
}

/** A provider of the caller's CRM by reference; 404 when unknown or another CRM's. */
export async function getProvider(ctx: Context, reference: string): Promise<Provider> {
  const crm = requireCrm(ctx);
  // Nearly every /crms route starts here (see findOneMapped).
  const provider = await findOneMapped(ctx.em, Provider, 'select * from provider where crm_id = ? and reference = ? limit 1', [crm.id, reference]);
  if (!provider) throw notFound('Provider', reference);
  return provider;
}

/** The provider's staff, owner first. */
export async function listStaff(ctx: Context, providerReference: string): Promise<User[]> {
  const provider = await getProvider(ctx, providerReference);
  const memberships = await ctx.em.find(StaffMembership, { provider }, { populate: ['user'], orderBy: { role: 'asc', createdAt: 'asc' } });
  return memberships.map((membership) => membership.user);
}

export const staffInput = z.object({ userReference: requiredText() });

/** Adds a user of the same CRM to the provider's staff; adding a member again changes nothing. */
export async function addStaff(ctx: Context, providerReference: string, raw: unknown): Promise<{ user: User; created: boolean }> {
  const crm = requireCrm(ctx);
  const input = parseInput(staffInput, raw);
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const user = await tx.em.findOne(User, { crm, reference: input.userReference });
    if (!user) throw new DomainError('USER_NOT_FOUND', `no user found for userReference`);
    const existing = await tx.em.findOne(StaffMembership, { provider, user });
    if (existing) return { user, created: false };
    tx.em.create(StaffMembership, { provider, user, role: 'STAFF', createdAt: new Date() });
    await tx.em.flush();
    return { user, created: true };
  });
}

/** Removes a staff member; the owner cannot be removed. */
export async function removeStaff(ctx: Context, providerReference: string, userReference: string): Promise<void> {
  const crm = requireCrm(ctx);
  await inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const user = await tx.em.findOne(User, { crm, reference: userReference });
    const membership = user && (await tx.em.findOne(StaffMembership, { provider, user }));
    if (!membership) throw notFound('Staff member', userReference);
    if (membership.role === 'OWNER') throw new DomainError('CONFLICT', 'The owner of a provider cannot be removed from its staff');
    await tx.em.removeAndFlush(membership);
  });
}

/** True when the user is staff of the provider (used by contact rules on resources and appointments). */
export async function isStaff(ctx: Context, provider: Provider, user: User): Promise<boolean> {
  return (await ctx.em.count(StaffMembership, { provider, user })) > 0;
}

export interface ProviderView {
  uuid: string;
  reference: string;
  name: string;
  email: string | null;
  mobile: string | null;
  phone: string | null;
  impressum: string | null;
  branch: string | null;
  subbranch: string | null;
}

export const toProviderView = (provider: Provider): ProviderView => ({
  uuid: provider.id,
  reference: provider.reference,
  name: provider.name,
  email: provider.email,
  mobile: provider.mobile,
  phone: provider.phone,
  impressum: provider.impressum,
  branch: provider.branch,
  subbranch: provider.subbranch,
});
