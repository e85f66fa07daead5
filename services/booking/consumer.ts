import type { Context } from '../kernel/context.js';
import { sql } from '../kernel/sql.js';
import { DomainError, RetryableRefusal } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import { type AdvisoryLock, PLACED, type WritesWithPlace } from './place-claim.js';

export interface ConsumerData {
  email: string;
  firstName: string;
  lastName: string;
  /** As E.164. */
  mobile: string | null;
  /** The mobile as the consumer typed it (trimmed): CRM users keep numbers as sent, so either spelling finds them. */
  mobileAsTyped: string | null;
  locale: string | null;
}

/** Whose consumer: the CRM (users) and the provider (customers) of the booked resource. */
export interface ConsumerOwner {
  crmId: string;
  providerId: string;
  /** Language of a new user without `locale` or language cookie. */
  crmLanguage: string;
}

export interface ConsumerCustomer {
  id: string;
  email: string | null;
  /** What still has to be written for this user and customer: sent with (and guarded by) the statement that writes the place. */
  writes: WritesWithPlace;
}

interface UserRow {
  id: string;
  /** A provider's staff or a resource's contact: shown to the public, never changed by it. */
  public: boolean;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  mobile: string | null;
  language: string;
}

interface CustomerRow {
  id: string;
  email: string | null;
  mobile: string | null;
  language: string | null;
  user_id: string | null;
}

/**
 * The consumer behind a booking (spec: "if a user with the given e-mail or
 * mobile number exists, the appointment is attached to that user"): the
 * CRM's user with the booking's e-mail; else the one user with its mobile
 * (as E.164 or as typed; two or more users with that number match none);
 * else a new user without reference. The user found gets its missing first
 * name, last name and mobile filled, never overwritten, unless it is a
 * provider's staff or a resource's contact: those are shown to the public
 * (public_data, contact channels), so the public flow never writes to them.
 * The provider gets a customer linked to that user (an existing one of the
 * user, else of the user's e-mail, is completed the same way). Runs inside
 * the booking's transaction, under consumerLock, which the caller holds
 * (two bookings with one new e-mail or mobile at once would both create
 * it), and, for a user found by mobile, under that user's e-mail lock too:
 * one lookup (two when found by mobile); the writes are answered, not run,
 * and travel in the statement that gives the place (one round trip fewer),
 * each guarded by that place: a refused booking writes no consumer, before
 * or in that statement.
 */
export async function findOrCreateConsumer(ctx: Context, owner: ConsumerOwner, data: ConsumerData): Promise<ConsumerCustomer> {
  let found = await lookUpConsumer(ctx, owner, data);
  const matched = found.user;
  if (matched?.email && matched.email !== data.email) {
    // Found by mobile: bookings with that user's own e-mail hold its lock, not ours, and may be writing its customer.
    // Try that lock without waiting (waiting could close a circle with a booking that holds it and waits for our
    // mobile's); when it is taken, the whole booking is tried again shortly. Then look again: a booking that held it
    // before has committed what it wrote.
    const [lock] = await sql<{ taken: boolean }>(ctx, 'select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as taken', [consumerLockKey(owner.crmId, matched.email)]);
    if (!lock?.taken) throw new RetryableRefusal(new DomainError('CONFLICT', 'Another booking of this consumer is being made at this moment; try again'), '55P03');
    found = await lookUpConsumer(ctx, owner, data);
  }
  const now = ctx.clock.now();
  const writes: string[] = [];
  const params: unknown[] = [];
  const user = found.user;
  const userId = user?.id ?? newId();
  const userEmail = user ? user.email : data.email;
  const userLanguage = user?.language ?? data.locale ?? ctx.language ?? owner.crmLanguage;
  if (!user) {
    writes.push(
      `insert into app_user (id, crm_id, email, email_verified, first_name, last_name, mobile, language, created_at)
       select ?::uuid, ?::text, ?::text, false, ?::text, ?::text, ?::text, ?::text, ?::timestamptz where ${PLACED}`,
    );
    params.push(userId, owner.crmId, data.email, data.firstName, data.lastName, data.mobile, userLanguage, now);
  } else if (!user.public && (user.first_name === null || user.last_name === null || (user.mobile === null && data.mobile !== null))) {
    writes.push(`update app_user set first_name = coalesce(first_name, ?), last_name = coalesce(last_name, ?), mobile = coalesce(mobile, ?) where id = ? and ${PLACED}`);
    params.push(data.firstName, data.lastName, data.mobile, userId);
  }
  const customer = found.customer;
  const customerId = customer?.id ?? newId();
  let customerEmail = customer?.email ?? userEmail;
  if (!customer) {
    writes.push(
      `insert into customer (id, crm_id, provider_id, reference, user_name, email, mobile, language, user_id, created_at)
       select ?::uuid, ?::text, ?::uuid, ?::text, ?::text, ?::text, ?::text, ?::text, ?::uuid, ?::timestamptz where ${PLACED}`,
    );
    params.push(customerId, owner.crmId, owner.providerId, `consumer-${newId()}`, `${data.firstName} ${data.lastName}`, userEmail, data.mobile ?? user?.mobile ?? null, data.locale ?? userLanguage, userId, now);
  } else if (customer.user_id === null || customer.email === null || (customer.mobile === null && data.mobile !== null) || (customer.language === null && data.locale !== null)) {
    writes.push(`update customer set user_id = coalesce(user_id, ?), email = coalesce(email, ?), mobile = coalesce(mobile, ?), language = coalesce(language, ?) where id = ? and ${PLACED}`);
    params.push(userId, userEmail, data.mobile, data.locale, customerId);
    customerEmail = customer.email ?? userEmail;
  }
  return { id: customerId, email: customerEmail, writes: { statements: writes, params } };
}

/** The user and customer a booking's consumer is (see findOrCreateConsumer), in one statement. */
async function lookUpConsumer(ctx: Context, owner: ConsumerOwner, data: ConsumerData): Promise<{ user: UserRow | null; customer: CustomerRow | null }> {
  const [found] = await sql<{ user: UserRow | null; customer: CustomerRow | null }>(ctx, `with by_email as (
       select id, email, first_name, last_name, mobile, language from app_user where crm_id = ? and email = ? limit 1
     ), by_mobile as (
       select id, email, first_name, last_name, mobile, language from app_user
        where crm_id = ? and mobile in (?::text, ?::text) and not exists (select 1 from by_email) limit 2
     ), found as (
       select * from by_email union all select * from by_mobile where (select count(*) from by_mobile) = 1
     ), u as (
       select found.*, exists (select 1 from staff_membership s where s.user_id = found.id)
                       or exists (select 1 from resource r where r.contact_id = found.id) as public
         from found
     ), c as (
       select * from (
         (select c.id, c.email, c.mobile, c.language, c.user_id, 1 as rank from customer c join u on c.user_id = u.id
           where c.provider_id = ? and c.erased_at is null limit 1)
         union all
         (select c.id, c.email, c.mobile, c.language, c.user_id, 2 from customer c
           where c.provider_id = ? and c.erased_at is null
             and c.email = case when exists (select 1 from u) then (select email from u) else ?::text end limit 1)
       ) candidates order by rank limit 1
     )
     select (select row_to_json(u) from u) as "user", (select row_to_json(c) from c) as customer`,
    [owner.crmId, data.email, owner.crmId, data.mobile, data.mobileAsTyped, owner.providerId, owner.providerId, data.email],
  );
  return found!;
}

/**
 * The locks findOrCreateConsumer needs (per CRM and e-mail, and per CRM and
 * mobile when one is given, until the transaction ends), taken by the
 * caller, possibly together with another read. Every booking takes its
 * e-mail's lock before its mobile's, so two bookings never wait for each
 * other in a circle. The lookup must run after them, in a statement of its
 * own: only a statement that starts after the lock sees the consumer a
 * transaction that held it before has written.
 */
export const consumerLock = (crmId: string, email: string, mobile: string | null): AdvisoryLock =>
  mobile
    ? {
        // Arguments are evaluated in order: the e-mail's lock, then the mobile's.
        sql: '(pg_advisory_xact_lock(hashtextextended(?, 0))::text || pg_advisory_xact_lock(hashtextextended(?, 0))::text)',
        params: [consumerLockKey(crmId, email), `consumer-mobile:${crmId}:${mobile}`],
      }
    : { sql: 'pg_advisory_xact_lock(hashtextextended(?, 0))', params: [consumerLockKey(crmId, email)] };

const consumerLockKey = (crmId: string, email: string) => `consumer:${crmId}:${email}`;
