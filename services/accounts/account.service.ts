import { z } from 'zod';
import { type Context, inTransaction, requireCrm } from '../kernel/context.js';
import { postalAddressInput } from '../kernel/address-input.js';
import { DomainError, notFound } from '../kernel/errors.js';
import { emailAddress, optionalText, parseInput, requiredText } from '../kernel/validation.js';
import { User } from '../users/user.entity.js';
import { Account, BRANCHES, type Branch } from './account.entity.js';

/** Account references have the form `<uniqueId>@<platformName>`. */
export const ACCOUNT_REFERENCE_PATTERN = /^[^@\s]+@[^@\s]+$/;

export const accountInput = z.object({
  ownerReference: requiredText(),
  accountReference: requiredText(),
  branch: requiredText(64),
  invoiceAddress: postalAddressInput('countryCode', true).nullish(),
  invoiceContactName: optionalText(),
  invoiceCompanyName: optionalText(),
  invoiceTaxId: optionalText(64),
  email: emailAddress().nullish(),
});

/** The branch, or the documented 404 when it is not one of the five. */
export function parseBranch(branch: string): Branch {
  if (!(BRANCHES as readonly string[]).includes(branch)) {
    throw new DomainError('BRANCH_NOT_FOUND', `Unable to find specified branch. Was ${branch}`);
  }
  return branch as Branch;
}

/** Creates an account, or returns the existing one with that reference unchanged. */
export async function createAccount(ctx: Context, raw: unknown): Promise<{ account: Account; created: boolean }> {
  const crm = requireCrm(ctx);
  const input = parseInput(accountInput, raw);
  if (!ACCOUNT_REFERENCE_PATTERN.test(input.accountReference)) {
    throw new DomainError('REFERENCE_UNPARSABLE', `Unable to parse account reference. Was ${input.accountReference}`);
  }
  const branch = parseBranch(input.branch);
  return inTransaction(ctx, async (tx) => {
    const existing = await tx.em.findOne(Account, { crm, reference: input.accountReference }, { populate: ['owner'] });
    if (existing) return { account: existing, created: false };
    const owner = await tx.em.findOne(User, { crm, reference: input.ownerReference });
    if (!owner) throw new DomainError('USER_NOT_FOUND', 'no user found for ownerReference');
    const account = tx.em.create(Account, {
      crm,
      reference: input.accountReference,
      owner,
      branch,
      invoiceAddress: input.invoiceAddress ?? null,
      invoiceContactName: input.invoiceContactName ?? null,
      invoiceCompanyName: input.invoiceCompanyName ?? null,
      invoiceTaxId: input.invoiceTaxId ?? null,
      email: input.email ?? null,
      createdAt: new Date(),
    });
    await tx.em.flush();
    return { account, created: true };
  });
}

export async function getAccount(ctx: Context, reference: string): Promise<Account> {
  const crm = requireCrm(ctx);
  const account = await ctx.em.findOne(Account, { crm, reference }, { populate: ['owner'] });
  if (!account) throw notFound('Account', reference);
  return account;
}

export interface AccountView {
  ownerReference: string | null;
  branch: string;
  accountReference: string;
  invoiceAddress: { city: string; countryCode: string; street: string; number: string; zip: string } | null;
  invoiceContactName: string | null;
  invoiceCompanyName: string | null;
  invoiceTaxId: string | null;
  email: string | null;
}

export const toAccountView = (account: Account): AccountView => ({
  ownerReference: account.owner.reference,
  branch: account.branch,
  accountReference: account.reference,
  invoiceAddress: account.invoiceAddress
    ? {
        city: account.invoiceAddress.city,
        countryCode: account.invoiceAddress.countryCode,
        street: account.invoiceAddress.street,
        number: account.invoiceAddress.number,
        zip: account.invoiceAddress.zip,
      }
    : null,
  invoiceContactName: account.invoiceContactName,
  invoiceCompanyName: account.invoiceCompanyName,
  invoiceTaxId: account.invoiceTaxId,
  email: account.email,
});
