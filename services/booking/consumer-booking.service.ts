import { limitEmail, limitPublic } from '../kernel/rate-limits.js';
import { z } from 'zod';
import { announceSlotsAroundClaim, claimedSlotEvent } from '../appointments/capacity-events.js';
import { sql } from '../kernel/sql.js';
import { type Context, inLeanTransaction, RetryInOrmTransaction } from '../kernel/context.js';
import { DomainError, validationError } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import { QUEUES } from '../kernel/jobs.js';
import { appointmentChangeDraft } from '../live/appointment-events.js';
import { normalisePhoneNumber, phoneCountryOfZone, phoneNumberText } from '../kernel/phone-number.js';
import { emailAddress, parseInput, requiredText } from '../kernel/validation.js';
import type { OutboxDraft } from '../outbox/outbox.service.js';
import type { EffectiveChannel } from '../resources/booking-channel.service.js';
import { type ConsumerCustomer, consumerLock, findOrCreateConsumer } from './consumer.js';
import { bookingScope, instantOf, type ScopeResource, uuidField } from './booking-request.js';
import { compilePattern, DEFAULT_TIME_FORMAT } from './date-pattern.js';
import { claimAndGive, completeHold, findHeldLot, type LotRow, slotTaken } from './place-claim.js';
import { appointmentOf, type HeldPlace, slotOf } from './reserve.service.js';
import { metrics } from '../kernel/metrics.js';

export const CONSUMER_MESSAGE_MAX = 1024;

export const bookingInput = z.object({
  start: z.string().trim().min(1),
  end: z.string().trim().min(1),
  timeslot_uuid: uuidField('timeslot_uuid'),
  product_uuid: uuidField('product_uuid').nullish(),
  placeholder_id: uuidField('placeholder_id').nullish(),
  email: emailAddress(),
  firstname: requiredText(),
  lastname: requiredText(),
  mobile: phoneNumberText().nullish(),
  message: z.string().max(CONSUMER_MESSAGE_MAX).nullish(),
  locale: z
    .string()
    .trim()
    .regex(/^[a-zA-Z]{2}([-_][a-zA-Z]{2})?$/, 'must be a language such as de or en')
    .transform((value) => value.slice(0, 2).toLowerCase())
    .nullish(),
  channelKey: z.string().nullish(),
});
type BookingInput = z.output<typeof bookingInput>;

export interface ConsumerBookingResult extends HeldPlace {
  /** Formats formattedStart/formattedEnd by the request's `timeFormat` in the consumer's language. */
  formatTime: (date: Date) => string;
}

const alreadyParticipating = () =>
  new DomainError('ALREADY_PARTICIPATING', 'AppointmentAlreadyBookedException: you already take part in this appointment', 'AppointmentAlreadyBookedException');

/**
 * Completes a booking with the consumer's data. The consumer's own hold
 * (found by `placeholder_id`) is completed; without one, or after it was
 * removed, the place is claimed afresh and refused with 412 if it is gone.
 * The channel's booking process decides BOOKED (IMMEDIATE) or REQUESTED.
 * The consumer's user and customer are written first, so the appointment's
 * lock is held only for the count, the participation and the outbox rows.
 */
export async function createAppointmentWithConsumer(
  ctx: Context,
  ref: string,
  raw: unknown,
  query: { extraRefs: string[]; channelKey?: string; timeFormat?: string },
): Promise<ConsumerBookingResult> {
  await limitPublic(ctx, 'booking', ref);
  const parsed = parseInput(bookingInput, raw);
  const scope = await bookingScope(ctx, ref, query.extraRefs, parsed.channelKey ?? query.channelKey);
  // National numbers (0170 …) are read in the provider's country; stored as E.164.
  const country = phoneCountryOfZone(scope.main.provider.timeZone);
  const input = { ...parsed, mobile: parsed.mobile == null ? null : normalisePhoneNumber(parsed.mobile, country, 'mobile'), mobileAsTyped: parsed.mobile?.trim() || null };
  const from = instantOf(input.start, scope.main, 'start');
  const to = instantOf(input.end, scope.main, 'end');
  if (to <= from) throw validationError('end must be after start');
  // Checked before booking: a bad pattern must be a 400 that books nothing.
  const timeFormat = query.timeFormat ?? DEFAULT_TIME_FORMAT;
  const formatTime = compilePattern(timeFormat, scope.main.provider.timeZone, input.locale, 'timeFormat');
  // In the zone of the provider whose resource is booked (resources of several providers may be named together).
  const formatTimeOf = (resource: ScopeResource) =>
    resource.provider.timeZone === scope.main.provider.timeZone ? formatTime : compilePattern(timeFormat, resource.provider.timeZone, input.locale, 'timeFormat');
  const requested = scope.productByUuid(input.product_uuid);
  // Counted once the booking is otherwise acceptable: a throw-away address cannot book without end, a typo does not use up the budget.
  await limitEmail(ctx, input.email);
  const booked = await inLeanTransaction(ctx, bookInTransaction).catch((error: unknown) => {
    // The database refused a second place of the same customer in the appointment.
    if ((error as { constraint?: string } | null)?.constraint === 'participation_customer_once_unique') throw alreadyParticipating();
    throw error;
  });
  metrics.bookings.inc({ state: booked.participation.state });
  return booked;

  async function bookInTransaction(tx: Context): Promise<ConsumerBookingResult> {
    const resourceIds = scope.resources.map((r) => r.id);
    // The consumer's lock (per CRM and e-mail, see consumer.ts) comes first on every path, before the slot's
    // appointment may be inserted: a completion takes it with its read of the hold, a booking without hold
    // with its read of the timeslot (one round trip for both).
    const lock = consumerLock(scope.main.crm.id, input.email, input.mobile);
    const held = input.placeholder_id ? await findHeldLot(tx, input.placeholder_id, resourceIds, lock) : null;
    // Customers belong to a provider: with resources of several providers, the appointment decides which.
    // Looked up once the place is known to be there, so a refusal costs no lookup.
    const consumers = new Map<string, ConsumerCustomer>();
    const consumerOf = async (resource: ScopeResource) => {
      let customer = consumers.get(resource.provider.id);
      if (!customer) consumers.set(resource.provider.id, (customer = await consumerFor(tx, resource, input)));
      return customer;
    };
    if (held) {
      const { lot } = held;
      if (lot.id !== input.timeslot_uuid && lot.timeslot_id !== input.timeslot_uuid) {
        throw validationError('timeslot_uuid must name the reserved appointment or its timeslot');
      }
      if (lot.start.getTime() !== from.getTime() || lot.end.getTime() !== to.getTime()) {
        throw validationError('start and end must be those of the reserved appointment');
      }
      // A hold does not outlive its appointment: once it is cancelled, archived or has begun, it cannot be completed.
      if (lot.state !== 'ACTIVE' || lot.archived || lot.start <= tx.clock.now()) throw slotTaken();
      const resource = scope.resources.find((r) => r.id === lot.resource_id)!;
      const { channel } = scope.channelOf(resource);
      const customer = await consumerOf(resource);
      await assertAcceptedOnExclusiveChannel(tx, channel, customer);
      const place = placeOf(channel, customer, input);
      const participation = { id: held.holdId, placeholderId: input.placeholder_id!, state: place.state, messages: place.messages };
      const count = await completeHold(tx, lot, held.holdId, place, bookingOutbox(tx, lot, participation, input.message ?? null, true), customer.writes);
      // A hold that went (expired and given way, or removed) between our read and our update is claimed afresh below.
      if (count.given) return { participation, lot, resource, product: scope.productById(lot.product_id), capacityLeft: count.capacity - count.taken - 1, formatTime: formatTimeOf(resource) };
      // That statement has committed (inSqlTransaction), having written nothing: the claim needs a new transaction.
      if (tx.sqlTransaction) throw new RetryInOrmTransaction('the hold is gone');
    }
    const request = {
      scope,
      uuid: input.timeslot_uuid,
      uuidKind: 'timeslot' as const,
      from,
      to,
      product: requested,
      holderWithoutHold: Boolean(input.placeholder_id),
      // Taken already with the hold's read.
      lockFirst: input.placeholder_id ? undefined : lock,
    };
    const { claim, count, place } = await claimAndGive(tx, request, async ({ lot, resource }) => {
      const { channel } = scope.channelOf(resource);
      const customer = await consumerOf(resource);
      await assertAcceptedOnExclusiveChannel(tx, channel, customer);
      const fields = placeOf(channel, customer, input);
      const participation = { id: newId(), placeholderId: newId(), state: fields.state, messages: fields.messages };
      return {
        participation,
        row: { ...fields, ...participation, expiresAt: null },
        outbox: bookingOutbox(tx, lot, participation, input.message ?? null, false),
        writes: customer.writes,
      };
    });
    if (!count.given) throw slotTaken();
    const { lot, resource } = claim;
    // The slot's first booking may close its neighbours (lead and follow-up time): announced with it.
    if (claim.created && scope.hasBlockedTime(resource)) await announceSlotsAroundClaim(tx, slotOf(lot));
    return { participation: place.participation, lot, resource, product: scope.productById(lot.product_id), capacityLeft: count.capacity - count.taken - 1, formatTime: formatTimeOf(resource) };
  }
}

function placeOf(channel: EffectiveChannel, customer: ConsumerCustomer, input: BookingInput) {
  return {
    state: channel.bookingProcess === 'IMMEDIATE' ? ('BOOKED' as const) : ('REQUESTED' as const),
    customerId: customer.id,
    channelKey: channel.channelKey,
    locale: input.locale ?? null,
    messages: input.message ? [input.message] : null,
  };
}

/** What a booking writes: mails to the consumer and the provider, the slot's new capacity, the CRM feed. */
function bookingOutbox(
  ctx: Context,
  lot: LotRow,
  participation: ConsumerBookingResult['participation'],
  message: string | null,
  fromHold: boolean,
): OutboxDraft[] {
  const [consumerMail, providerMail] =
    participation.state === 'BOOKED'
      ? (['booking-confirmation', 'provider-booking-notification'] as const)
      : (['booking-request-received', 'provider-booking-request'] as const);
  // Events first: the relay hands rows on in id order, and live calendars should not wait for mails being queued.
  return [
    claimedSlotEvent(slotOf(lot)),
    appointmentChangeDraft(
      ctx,
      fromHold ? 'PARTICIPATION_STATE_CHANGED' : 'PARTICIPATION_ADDED',
      appointmentOf(lot),
      { id: participation.id, reference: participation.id, state: participation.state },
      fromHold ? 'RESERVED' : null,
    ),
    ...[consumerMail, providerMail].map((template) => ({
      kind: 'mail' as const,
      topic: QUEUES.mail,
      payload: { template, params: { participationId: participation.id, appointmentId: lot.id }, message },
    })),
  ];
}

/** The consumer's user and customer of the resource's provider (see consumer.ts), under the consumer's lock the caller took. */
const consumerFor = (ctx: Context, resource: ScopeResource, input: BookingInput & { mobileAsTyped: string | null }): Promise<ConsumerCustomer> =>
  findOrCreateConsumer(
    ctx,
    { crmId: resource.crm.id, providerId: resource.provider.id, crmLanguage: resource.crm.language },
    { email: input.email, firstName: input.firstname, lastName: input.lastname, mobile: input.mobile ?? null, mobileAsTyped: input.mobileAsTyped, locale: input.locale ?? null },
  );

/** On RESOURCE_EXCLUSIVE only the provider's accepted customers may book (matched by customer or e-mail). */
async function assertAcceptedOnExclusiveChannel(ctx: Context, channel: EffectiveChannel, customer: ConsumerCustomer): Promise<void> {
  if (channel.channelKey !== 'RESOURCE_EXCLUSIVE') return;
  // Through sql(): in a lean transaction, on its connection (a read through the EntityManager would wait for a second pooled one).
  const accepted = channel.acceptedCustomerIds.length
    ? await sql<{ id: string; email: string | null }>(ctx, 'select id, email from customer where id = any(?::uuid[]) and erased_at is null', [channel.acceptedCustomerIds])
    : [];
  const ok = accepted.some((c) => c.id === customer.id || (c.email && customer.email && c.email.toLowerCase() === customer.email.toLowerCase()));
  if (!ok) throw new DomainError('FORBIDDEN', 'Only customers accepted by the provider can book on this channel');
}
