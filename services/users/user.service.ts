import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { type Context, inTransaction, requireCrm } from '../kernel/context.js';
import { DomainError, notFound } from '../kernel/errors.js';
import { QUEUES } from '../kernel/jobs.js';
import { emailAddress, languageCode, optionalText, parseInput, requiredText } from '../kernel/validation.js';
import { writeOutbox } from '../outbox/outbox.service.js';
import { User } from './user.entity.js';

const FORBIDDEN_USERNAME_CHARACTERS = /[/?:&#\\]/;

export const userInput = z.object({
  reference: requiredText(),
  email: emailAddress(),
  username: requiredText().refine((value) => !FORBIDDEN_USERNAME_CHARACTERS.test(value), {
    message: 'must not contain any of the characters / ? : & # \\',
  }),
  lastName: requiredText(),
  firstName: optionalText(),
  phone: optionalText(64),
  mobile: optionalText(64),
  language: languageCode().nullish(),
});
export type UserInput = z.input<typeof userInput>;

export type CreateUserOutcome = 'created' | 'updated' | 'linked';

export const EMAIL_IN_USE_MESSAGE = 'User with given email already exists.';
export const USERNAME_IN_USE_MESSAGE = 'User with given username already exists.';

/**
 * Creates or returns a user (spec "create user", rules 1-4):
 * a known reference is updated; an e-mail held under another reference gets a
 * generated variant; an e-mail of a user without reference (a consumer) links
 * that user and restarts its e-mail verification; otherwise a new user.
 */
export async function createUser(ctx: Context, raw: unknown): Promise<{ user: User; outcome: CreateUserOutcome }> {
  const crm = requireCrm(ctx);
  const input = parseInput(userInput, raw);
  return inTransaction(ctx, async (tx) => {
    const em = tx.em;
    const existing = await em.findOne(User, { crm, reference: input.reference });
    if (existing) {
      existing.lastName = input.lastName;
      if (input.firstName !== undefined) existing.firstName = input.firstName ?? null;
      if (input.phone !== undefined) existing.phone = input.phone ?? null;
      if (input.mobile !== undefined) existing.mobile = input.mobile ?? null;
      await em.flush();
      return { user: existing, outcome: 'updated' as const };
    }

    const holder = await em.findOne(User, { crm, username: input.username });
    const byEmail = await em.findOne(User, { crm, email: input.email });
    if (holder && holder === byEmail && byEmail.reference) {
      // The same person (e-mail and login name) is already registered under another reference.
      throw new DomainError('EMAIL_IN_USE', EMAIL_IN_USE_MESSAGE);
    }
    if (holder && holder !== byEmail) throw new DomainError('USERNAME_IN_USE', USERNAME_IN_USE_MESSAGE);

    if (byEmail && !byEmail.reference) {
      byEmail.reference = input.reference;
      byEmail.username = input.username;
      // From now on the CRM manages this user: what it sends replaces what the booking flow stored.
      byEmail.lastName = input.lastName;
      if (input.firstName !== undefined) byEmail.firstName = input.firstName ?? null;
      if (input.phone !== undefined) byEmail.phone = input.phone ?? null;
      if (input.mobile !== undefined) byEmail.mobile = input.mobile ?? null;
      if (input.language) byEmail.language = input.language;
      startEmailVerification(tx, byEmail);
      return { user: byEmail, outcome: 'linked' as const };
    }

    const email = byEmail ? await freeEmailVariant(tx, input.email) : input.email;
    const user = em.create(User, {
      crm,
      reference: input.reference,
      email,
      username: input.username,
      lastName: input.lastName,
      firstName: input.firstName ?? null,
      phone: input.phone ?? null,
      mobile: input.mobile ?? null,
      language: input.language ?? tx.language ?? crm.language,
      emailVerified: false,
      createdAt: new Date(),
    });
    await em.flush();
    return { user, outcome: 'created' as const };
  });
}

/** Finds a user of the caller's CRM by reference; 404 when unknown or another CRM's. */
export async function getUser(ctx: Context, reference: string): Promise<User> {
  const crm = requireCrm(ctx);
  const user = await ctx.em.findOne(User, { crm, reference });
  if (!user) throw notFound('User', reference);
  return user;
}

/** Invalidates the user's e-mail verification and queues a new verification e-mail. */
export function startEmailVerification(ctx: Context, user: User): void {
  user.emailVerified = false;
  user.emailVerificationToken = randomBytes(24).toString('base64url');
  writeOutbox(ctx.em, {
    kind: 'mail',
    topic: QUEUES.mail,
    payload: { template: 'user-verification', params: { userId: user.id } },
  });
}

/** `name@host` is taken: the first free `name+N@host`. */
async function freeEmailVariant(ctx: Context, email: string): Promise<string> {
  const crm = requireCrm(ctx);
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  const taken = new Set(
    (await ctx.em.find(User, { crm, email: { $like: `${local.replace(/[\\%_]/g, '\\$&')}+%@${domain.replace(/[\\%_]/g, '\\$&')}` } }, { fields: ['email'] })).map(
      (user) => user.email,
    ),
  );
  for (let n = 1; ; n++) {
    const candidate = `${local}+${n}@${domain}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** Confirms the e-mail address whose verification mail carried the token; false when the token is unknown or used. */
/** Whether the token belongs to an e-mail address still waiting for its verification (reads only). */
export async function isPendingVerification(ctx: Context, token: string): Promise<boolean> {
  if (!/^[A-Za-z0-9_-]{16,64}$/.test(token)) return false;
  return (await ctx.em.count(User, { emailVerificationToken: token })) > 0;
}

export async function verifyEmail(ctx: Context, token: string): Promise<boolean> {
  if (!/^[A-Za-z0-9_-]{16,64}$/.test(token)) return false;
  return inTransaction(ctx, async (tx) => {
    const user = await tx.em.findOne(User, { emailVerificationToken: token });
    if (!user) return false;
    user.emailVerified = true;
    user.emailVerificationToken = null;
    await tx.em.flush();
    return true;
  });
}
