import { z } from 'zod';
import { Appointment } from '../appointments/appointment.entity.js';
import { announceCapacity } from '../appointments/capacity-events.js';
import { Customer } from '../customers/customer.entity.js';
import { type Context, inTransaction } from '../kernel/context.js';
import { DomainError, validationError } from '../kernel/errors.js';
import { QUEUES } from '../kernel/jobs.js';
import { announceAppointmentChange } from '../live/appointment-events.js';
import { emailAddress, internationalPhone, parseInput, requiredText } from '../kernel/validation.js';
import { writeOutbox } from '../outbox/outbox.service.js';
import { Participation } from '../participations/participation.entity.js';
import type { EffectiveChannel } from '../resources/booking-channel.service.js';
import type { Resource } from '../resources/resource.entity.js';
import { findOrCreateConsumer } from './consumer.js';
import { bookingScope, instantOf, productByUuid, uuidField } from './booking-request.js';
import { compilePattern, DEFAULT_TIME_FORMAT } from './date-pattern.js';
import { capacityLeft } from '../appointments/occupancy.js';
import { claimPlace, lockAppointment, slotTaken } from './place-claim.js';

export const CONSUMER_MESSAGE_MAX = 1024;

const bookingInput = z.object({
  start: z.string().trim().min(1),
  end: z.string().trim().min(1),
  timeslot_uuid: uuidField('timeslot_uuid'),
  product_uuid: uuidField('product_uuid').nullish(),
  placeholder_id: uuidField('placeholder_id').nullish(),
  email: emailAddress(),
  firstname: requiredText(),
  lastname: requiredText(),
  mobile: internationalPhone().nullish(),
  message: z.string().max(CONSUMER_MESSAGE_MAX).nullish(),
  locale: z
    .string()
    .trim()
    .regex(/^[a-zA-Z]{2}([-_][a-zA-Z]{2})?$/, 'must be a language such as de or en')
    .transform((value) => value.slice(0, 2).toLowerCase())
    .nullish(),
  channelKey: z.string().nullish(),
});

export interface ConsumerBookingResult {
  participation: Participation;
  appointment: Appointment;
  capacityLeft: number;
  resource: Resource;
  /** Formats formattedStart/formattedEnd by the request's `timeFormat` in the consumer's language. */
  formatTime: (date: Date) => string;
}

/**
 * Completes a booking with the consumer's data. The consumer's own hold
 * (found by `placeholder_id`) is completed; without one, or after it was
 * removed, the place is claimed afresh and refused with 412 if it is gone.
 * The channel's booking process decides BOOKED (IMMEDIATE) or REQUESTED.
 */
export async function createAppointmentWithConsumer(
  ctx: Context,
  ref: string,
  raw: unknown,
  query: { extraRefs: string[]; channelKey?: string; timeFormat?: string },
): Promise<ConsumerBookingResult> {
  const input = parseInput(bookingInput, raw);
  const scope = await bookingScope(ctx, ref, query.extraRefs, input.channelKey ?? query.channelKey);
  const from = instantOf(input.start, scope.main, 'start');
  const to = instantOf(input.end, scope.main, 'end');
  if (to <= from) throw validationError('end must be after start');
  // Checked before booking: a bad pattern must be a 400 that books nothing.
  const formatTime = compilePattern(query.timeFormat ?? DEFAULT_TIME_FORMAT, scope.main.provider.timeZone, input.locale, 'timeFormat');
  return inTransaction(scope.scoped, async (tx) => {
    const product = await productByUuid(tx, scope.main, input.product_uuid);
    const resourceIds = scope.resources.map((r) => r.id);
    let hold = input.placeholder_id
      ? await tx.em.findOne(Participation, { placeholderId: input.placeholder_id, state: 'RESERVED', appointment: { resource: { $in: resourceIds } } })
      : null;
    let appointment!: Appointment;
    let left: number;
    if (hold) {
      appointment = (await lockAppointment(tx, { id: hold.appointment.id }))!;
      hold = await tx.em.findOne(Participation, { id: hold.id, state: 'RESERVED' }, { refresh: true });
    }
    if (hold) {
      if (appointment.id !== input.timeslot_uuid && appointment.timeslot?.id !== input.timeslot_uuid) {
        throw validationError('timeslot_uuid must name the reserved appointment or its timeslot');
      }
      if (appointment.start.getTime() !== from.getTime() || appointment.end.getTime() !== to.getTime()) {
        throw validationError('start and end must be those of the reserved appointment');
      }
      // A hold does not outlive its appointment: once it is cancelled, archived or has begun, it cannot be completed.
      if (appointment.state !== 'ACTIVE' || appointment.archived || appointment.start <= tx.clock.now()) throw slotTaken();
      const live = hold.expiresAt !== null && hold.expiresAt > tx.clock.now();
      // An expired hold no longer counts, so the place must still be free to complete it.
      left = (await capacityLeft(tx, appointment)) - (live ? 0 : 1);
      if (left < 0) throw slotTaken();
    } else {
      const claim = await claimPlace(tx, { resources: scope.resources, channelOf: scope.channelOf, uuid: input.timeslot_uuid, from, to, product });
      appointment = claim.appointment;
      left = claim.capacityLeft - 1;
      if (left < 0) throw slotTaken();
    }

    const resource = scope.resources.find((r) => r.id === appointment.resource.id)!;
    const { channel } = scope.channelOf(resource);
    const { customer } = await findOrCreateConsumer(tx, resource, {
      email: input.email,
      firstName: input.firstname,
      lastName: input.lastname,
      mobile: input.mobile ?? null,
      locale: input.locale ?? null,
    });
    await assertAcceptedOnExclusiveChannel(tx, channel, customer);
    const already = await tx.em.count(Participation, {
      appointment,
      customer,
      id: { $ne: hold?.id ?? null },
      $or: [{ state: { $in: ['REQUESTED', 'BOOKED'] } }, { state: 'RESERVED', expiresAt: { $gt: tx.clock.now() } }],
    });
    if (already) {
      throw new DomainError('ALREADY_PARTICIPATING', 'AppointmentAlreadyBookedException: you already take part in this appointment', 'AppointmentAlreadyBookedException');
    }

    const participation = hold ?? tx.em.create(Participation, { crm: appointment.crm, appointment, state: 'RESERVED', channelKey: channel.channelKey });
    participation.customer = customer;
    participation.state = channel.bookingProcess === 'IMMEDIATE' ? 'BOOKED' : 'REQUESTED';
    participation.expiresAt = null;
    participation.channelKey = channel.channelKey;
    participation.locale = input.locale ?? null;
    participation.messages = input.message ? [input.message] : null;
    await tx.em.flush();

    const [consumerMail, providerMail] =
      channel.bookingProcess === 'IMMEDIATE'
        ? (['booking-confirmation', 'provider-booking-notification'] as const)
        : (['booking-request-received', 'provider-booking-request'] as const);
    for (const template of [consumerMail, providerMail]) {
      writeOutbox(tx.em, {
        kind: 'mail',
        topic: QUEUES.mail,
        payload: { template, params: { participationId: participation.id, appointmentId: appointment.id }, message: input.message ?? null },
      });
    }
    await announceCapacity(tx, appointment);
    announceAppointmentChange(tx, hold ? 'PARTICIPATION_STATE_CHANGED' : 'PARTICIPATION_ADDED', appointment, participation, hold ? 'RESERVED' : null);
    await tx.em.populate(appointment, ['provider', 'resource', 'product', 'timeslot']);
    return { participation, appointment, capacityLeft: left, resource, formatTime };
  });
}

/** On RESOURCE_EXCLUSIVE only the provider's accepted customers may book (matched by customer or e-mail). */
async function assertAcceptedOnExclusiveChannel(ctx: Context, channel: EffectiveChannel, customer: Customer): Promise<void> {
  if (channel.channelKey !== 'RESOURCE_EXCLUSIVE') return;
  const accepted = channel.acceptedCustomerIds.length ? await ctx.em.find(Customer, { id: { $in: channel.acceptedCustomerIds }, erasedAt: null }) : [];
  const ok = accepted.some((c) => c.id === customer.id || (c.email && customer.email && c.email.toLowerCase() === customer.email.toLowerCase()));
  if (!ok) throw new DomainError('FORBIDDEN', 'Only customers accepted by the provider can book on this channel');
}
