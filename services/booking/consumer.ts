import { Customer } from '../customers/customer.entity.js';
import type { Context } from '../kernel/context.js';
import { newId } from '../kernel/ids.js';
import type { Resource } from '../resources/resource.entity.js';
import { User } from '../users/user.entity.js';

export interface ConsumerData {
  email: string;
  firstName: string;
  lastName: string;
  mobile: string | null;
  locale: string | null;
}

/**
 * The consumer behind a booking: an existing user of the CRM found by e-mail,
 * else by mobile, gets only its missing attributes filled (never
 * overwritten); otherwise a new user without reference is created. The
 * provider gets a customer linked to that user. Runs inside the booking's
 * transaction; bookings with the same e-mail are serialised from here on.
 */
export async function findOrCreateConsumer(ctx: Context, resource: Resource, data: ConsumerData): Promise<{ user: User; customer: Customer }> {
  const crm = resource.crm;
  // Two bookings with one new e-mail at once would both create the user and one would fail on the unique e-mail.
  await ctx.em.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`consumer:${crm.id}:${data.email}`]);
  let user = (await ctx.em.findOne(User, { crm, email: data.email })) ?? (data.mobile ? await ctx.em.findOne(User, { crm, mobile: data.mobile }) : null);
  if (user) {
    user.firstName ??= data.firstName;
    user.lastName ??= data.lastName;
    user.mobile ??= data.mobile;
  } else {
    user = ctx.em.create(User, {
      crm,
      email: data.email,
      firstName: data.firstName,
      lastName: data.lastName,
      mobile: data.mobile,
      language: data.locale ?? ctx.language ?? crm.language,
    });
  }
  const provider = resource.provider;
  let customer = await ctx.em.findOne(Customer, { provider, user, erasedAt: null });
  if (!customer && user.email) customer = await ctx.em.findOne(Customer, { provider, email: user.email, erasedAt: null });
  if (customer) {
    customer.user ??= user;
    customer.email ??= user.email;
    customer.mobile ??= data.mobile;
    customer.language ??= data.locale;
  } else {
    customer = ctx.em.create(Customer, {
      crm,
      provider,
      reference: `consumer-${newId()}`,
      userName: `${data.firstName} ${data.lastName}`,
      email: user.email,
      mobile: data.mobile ?? user.mobile,
      language: data.locale ?? user.language,
      user,
    });
  }
  await ctx.em.flush();
  return { user, customer };
}
