import { z } from 'zod';
import { type Context, inTransaction, requireCrm } from '../kernel/context.js';
import { DomainError, notFound, validationError } from '../kernel/errors.js';
import { emailAddress, internationalPhone, parseInput, requiredText } from '../kernel/validation.js';
import { MailDelivery } from '../mail/mail-delivery.entity.js';
import { OCCUPYING_STATES, Participation } from '../participations/participation.entity.js';
import { changeParticipationStates } from '../participations/participation-state.js';
import type { Provider } from '../providers/provider.entity.js';
import { getProvider } from '../providers/provider.service.js';
import { User } from '../users/user.entity.js';
import { Customer } from './customer.entity.js';

export const NOTE_MAX = 1023;
const language = z
  .string()
  .trim()
  .regex(/^[a-z]{2}(-[A-Za-z]{2})?$/, 'must be a language code such as de or en')
  .transform((value) => value.slice(0, 2).toLowerCase());

export const customerCreateInput = z.object({
  customerReference: requiredText(),
  providerReference: requiredText(),
  userName: requiredText(),
  email: emailAddress().nullish(),
  mobile: internationalPhone().nullish(),
  note: z.string().max(NOTE_MAX).nullish(),
  language: language.nullish(),
});

export const customerUpdateInput = z.object({
  customerReference: requiredText().optional(),
  userName: requiredText().optional(),
  email: emailAddress().nullish(),
  mobile: internationalPhone().nullish(),
  note: z.string().max(NOTE_MAX).nullish(),
  language: language.nullish(),
});

/** A live (not erased) customer of the provider, or null. */
export async function findCustomer(ctx: Context, provider: Provider, reference: string): Promise<Customer | null> {
  return ctx.em.findOne(Customer, { crm: requireCrm(ctx), provider, reference, erasedAt: null });
}

async function customerOrFail(ctx: Context, provider: Provider, reference: string): Promise<Customer> {
  const customer = await findCustomer(ctx, provider, reference);
  if (!customer) throw notFound('Customer', reference);
  return customer;
}

/** The customer by reference, or null (the REST facade answers 204 for null). */
export async function getCustomer(ctx: Context, providerReference: string, reference: string): Promise<Customer | null> {
  const provider = await getProvider(ctx, providerReference);
  return findCustomer(ctx, provider, reference);
}

/** Creates a customer; an existing reference returns the existing customer unchanged. */
export async function createCustomer(ctx: Context, providerReference: string, raw: unknown): Promise<{ customer: Customer; created: boolean }> {
  const crm = requireCrm(ctx);
  const input = parseInput(customerCreateInput, raw);
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    if (input.providerReference !== provider.reference) {
      throw validationError(`providerReference must be ${provider.reference}, the provider of the path`);
    }
    const existing = await findCustomer(tx, provider, input.customerReference);
    if (existing) return { customer: existing, created: false };
    // References are unique per CRM; say so instead of failing on the unique constraint.
    if (await tx.em.count(Customer, { crm, reference: input.customerReference })) {
      throw new DomainError('CONFLICT', `Customer reference ${input.customerReference} is already used by another provider`);
    }
    const customer = tx.em.create(Customer, {
      crm,
      provider,
      reference: input.customerReference,
      userName: input.userName,
      email: input.email ?? null,
      mobile: input.mobile ?? null,
      note: input.note ?? null,
      language: input.language ?? null,
    });
    await tx.em.flush();
    return { customer, created: true };
  });
}

/** Updates the supplied fields; the reference may change, but never to empty or to another customer's. */
export async function updateCustomer(ctx: Context, providerReference: string, reference: string, raw: unknown): Promise<Customer> {
  const input = parseInput(customerUpdateInput, raw);
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const customer = await customerOrFail(tx, provider, reference);
    if (input.customerReference && input.customerReference !== customer.reference) {
      if (await tx.em.count(Customer, { crm: customer.crm, reference: input.customerReference })) {
        throw new DomainError('CONFLICT', `Customer reference ${input.customerReference} is already in use`);
      }
      customer.reference = input.customerReference;
    }
    if (input.userName !== undefined) customer.userName = input.userName;
    if (input.email !== undefined) customer.email = input.email ?? null;
    if (input.mobile !== undefined) customer.mobile = input.mobile ?? null;
    if (input.note !== undefined) customer.note = input.note ?? null;
    if (input.language !== undefined) customer.language = input.language ?? null;
    await tx.em.flush();
    return customer;
  });
}

/**
 * Erases a customer (data protection): refused while the customer takes part
 * in future appointments, unless `ignoreFutureAppointments`, which cancels
 * those participations and tells the customer by e-mail first. Name, e-mail,
 * mobile, note and messages are erased; participations stay, anonymised.
 */
export async function deleteCustomer(ctx: Context, providerReference: string, reference: string, ignoreFutureAppointments: boolean): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const customer = await customerOrFail(tx, provider, reference);
    // Held until commit: the mail worker shares this lock when it records a recipient (see recordDelivery).
    await tx.em.execute('select 1 from customer where id = ? for update', [customer.id]);
    const now = tx.clock.now();
    const future = await tx.em.find(
      Participation,
      {
        customer,
        appointment: { start: { $gt: now }, state: 'ACTIVE' },
        $or: [{ state: { $in: ['REQUESTED', 'BOOKED'] } }, { state: 'RESERVED', expiresAt: { $gt: now } }],
      },
      { populate: ['appointment'] },
    );
    if (future.length && !ignoreFutureAppointments) {
      throw new DomainError(
        'HAS_FUTURE_APPOINTMENTS',
        `Customer ${reference} takes part in ${future.length} future appointment(s); pass ignoreFutureAppointments=true to remove them and delete the customer`,
      );
    }
    // Each appointment in id order (the lock order of batch writers), through the one participation write path;
    // re-read under the lock, a participation a parallel request already ended is left as it is.
    const byAppointment = new Map<string, string[]>();
    for (const participation of future) byAppointment.set(participation.appointment.id, [...(byAppointment.get(participation.appointment.id) ?? []), participation.id]);
    for (const appointmentId of [...byAppointment.keys()].sort()) {
      await changeParticipationStates(tx, appointmentId, { ids: byAppointment.get(appointmentId)! }, {
        to: 'CANCELED',
        sendMails: true,
        refused: 'skip',
        applies: (participation) => OCCUPYING_STATES.includes(participation.state),
        // The customer is erased below, so the farewell mail carries its own recipient data.
        mails: (participation) =>
          customer.email
            ? [
                {
                  template: 'participation-canceled',
                  params: { participationId: participation.id, appointmentId },
                  recipient: { email: customer.email, name: customer.userName, language: customer.language ?? provider.language },
                  personal: true,
                },
              ]
            : [],
      });
    }
    await eraseCustomer(tx, customer);
  });
}

/** Overwrites every personal field of the customer, its messages, mail records and an otherwise unused consumer account. */
async function eraseCustomer(ctx: Context, customer: Customer): Promise<void> {
  const em = ctx.em;
  const participations = await em.find(Participation, { customer }, { fields: ['id', 'messages'] });
  for (const participation of participations) participation.messages = null;
  const participationIds = participations.map((p) => p.id);
  // A delivery error can quote the address ("550 <carla@...>: mailbox unavailable").
  await em.nativeUpdate(MailDelivery, { participationId: { $in: participationIds } }, { recipient: 'erased', lastError: null });
  if (participationIds.length) {
    // Mail rows about these participations carry the CRM's free-text message, a copy of the erased messages.
    await em.execute(
      `update outbox_message set payload = payload - 'message'
        where kind = 'mail' and payload->'params'->>'participationId' in (${participationIds.map(() => '?').join(',')})`,
      participationIds,
    );
  }
  const user = customer.user;
  customer.reference = `erased-${customer.id}`;
  customer.userName = 'erased';
  customer.email = null;
  customer.mobile = null;
  customer.note = null;
  customer.language = null;
  customer.user = null;
  customer.erasedAt = ctx.clock.now();
  await em.flush();
  if (user) {
    const account = await em.findOne(User, { id: user.id });
    const stillUsed = await em.count(Customer, { user: account, erasedAt: null });
    if (account && !account.reference && stillUsed === 0) {
      // A consumer account that only existed for this customer.
      account.email = `erased-${account.id}@invalid`;
      account.firstName = null;
      account.lastName = null;
      account.mobile = null;
      account.phone = null;
      account.emailVerificationToken = null;
      await em.flush();
    }
  }
}

export interface CustomerView {
  customerReference: string;
  email: string | null;
  note: string | null;
  userName: string;
  mobile: string | null;
  language: string | null;
  providerReference: string;
}

export const toCustomerView = (customer: Customer): CustomerView => ({
  customerReference: customer.reference,
  email: customer.email,
  note: customer.note,
  userName: customer.userName,
  mobile: customer.mobile,
  language: customer.language,
  providerReference: customer.provider.reference,
});
