import { LockMode } from '@mikro-orm/core';
import { z } from 'zod';
import { Appointment } from '../appointments/appointment.entity.js';
import { announceCapacity } from '../appointments/capacity-events.js';
import { capacityLeft } from '../appointments/occupancy.js';
import { Customer } from '../customers/customer.entity.js';
import { type Context, inTransaction, requireCrm } from '../kernel/context.js';
import { DomainError, notFound, validationError } from '../kernel/errors.js';
import { announceAppointmentChange } from '../live/appointment-events.js';
import { parseInput, requiredText } from '../kernel/validation.js';
import { getProvider } from '../providers/provider.service.js';
import { OCCUPYING_STATES, PARTICIPATION_STATES, Participation, type ParticipationState } from './participation.entity.js';
import { placeHold } from './hold.service.js';
import { changeParticipationState, stateMail, writeMails } from './participation-state.js';

export const MESSAGE_MAX = 1024;

export const participationCreateInput = z.object({
  reference: requiredText(),
  appointmentReference: requiredText(),
  customerReference: requiredText(),
  state: z.enum(PARTICIPATION_STATES),
  message: z.string().max(MESSAGE_MAX).nullish(),
});

export const participationUpdateInput = z.object({
  state: z.enum(PARTICIPATION_STATES),
  message: z.string().max(MESSAGE_MAX).nullish(),
});

export interface CreateParticipationOptions {
  ignoreCapacity: boolean;
  onDuplicateRaise: boolean;
  sendMails: boolean;
}

/** A new participation announces itself only when it is a booking or a request; nobody is told of a place they never had. */
const MAIL_ON_CREATE: readonly ParticipationState[] = ['BOOKED', 'REQUESTED'];

/**
 * Adds a customer to an appointment. The appointment row is locked for the
 * capacity check and the insert, so concurrent creates never overfill it.
 * An existing reference is updated (a state change by the transition table),
 * or refused with `onDuplicateRaise`.
 */
export async function createParticipation(
  ctx: Context,
  providerReference: string,
  raw: unknown,
  options: CreateParticipationOptions,
): Promise<{ participation: Participation; created: boolean }> {
  const crm = requireCrm(ctx);
  const input = parseInput(participationCreateInput, raw);
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const existing = await tx.em.findOne(Participation, { crm, reference: input.reference }, { populate: ['appointment', 'customer'] });
    if (existing) {
      if (options.onDuplicateRaise) throw new DomainError('CONFLICT', `Participation ${input.reference} already exists`);
      if (existing.appointment.provider.id !== provider.id) throw new DomainError('CONFLICT', `Participation ${input.reference} belongs to another provider`);
      // The update of a duplicate changes the state only; moving a participation to another appointment or customer
      // would bypass the capacity and once-per-customer rules, so a body that names others is refused, not ignored.
      if (existing.appointment.reference !== input.appointmentReference || existing.customer?.reference !== input.customerReference) {
        throw new DomainError(
          'CONFLICT',
          `Participation ${input.reference} already exists for appointment ${existing.appointment.reference} and another customer or appointment; only its state can change`,
        );
      }
      await changeState(tx, existing, input.state, input.message ?? null, { sendMails: options.sendMails, ignoreCapacity: options.ignoreCapacity });
      return { participation: existing, created: false };
    }
    const appointment = await tx.em.findOne(
      Appointment,
      { crm, provider, reference: input.appointmentReference },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    // References in the body that name nothing make the request invalid (400), as for appointments and timeslots.
    if (!appointment) throw validationError(`appointmentReference: no appointment ${input.appointmentReference}`);
    if (appointment.state !== 'ACTIVE') throw new DomainError('CONFLICT', `Appointment ${appointment.reference} is cancelled`);
    const customer = await tx.em.findOne(Customer, { crm, provider, reference: input.customerReference, erasedAt: null });
    if (!customer) throw validationError(`customerReference: no customer ${input.customerReference}`);
    const occupies = OCCUPYING_STATES.includes(input.state);
    if (occupies && !options.ignoreCapacity && (await capacityLeft(tx, appointment)) <= 0) {
      throw new DomainError('CAPACITY_EXHAUSTED', `Appointment ${appointment.reference} is full (capacity ${appointment.capacity})`);
    }
    const participation = tx.em.create(Participation, {
      crm,
      appointment,
      customer,
      reference: input.reference,
      state: input.state,
      messages: input.message ? [input.message] : null,
    });
    if (input.state === 'RESERVED') placeHold(tx, participation);
    await tx.em.flush();
    if (options.sendMails && MAIL_ON_CREATE.includes(input.state)) writeMails(tx, stateMail(participation, input.state, input.message ?? null));
    if (occupies) await announceCapacity(tx, appointment);
    announceAppointmentChange(tx, 'PARTICIPATION_ADDED', appointment, participation);
    return { participation, created: true };
  });
}

/**
 * Moves a participation to another state by the spec's transition table, judged on the state read under the
 * appointment's lock (see participation-state.ts); e-mails only where the table says so.
 */
export async function updateParticipationState(
  ctx: Context,
  providerReference: string,
  reference: string,
  raw: unknown,
  sendMails: boolean,
): Promise<Participation> {
  const crm = requireCrm(ctx);
  const input = parseInput(participationUpdateInput, raw);
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const participation = await tx.em.findOne(Participation, { crm, reference, appointment: { provider } }, { populate: ['appointment', 'customer'] });
    if (!participation) throw notFound('Participation', reference);
    await changeState(tx, participation, input.state, input.message ?? null, { sendMails, ignoreCapacity: false });
    return participation;
  });
}

/** A CRM's state change: through the one locked write path, refusing what the table forbids (409). */
async function changeState(
  ctx: Context,
  participation: Participation,
  to: ParticipationState,
  message: string | null,
  options: { sendMails: boolean; ignoreCapacity: boolean },
): Promise<void> {
  const changed = await changeParticipationState(ctx, participation.id, { to, message, sendMails: options.sendMails, ignoreCapacity: options.ignoreCapacity, refused: 'throw' });
  // Removed while this request waited for the lock (an expired hold, an appointment deleted without notification).
  if (!changed) throw notFound('Participation', participation.reference ?? participation.id);
}

export interface ParticipationView {
  reference: string | null;
  appointmentReference: string;
  customerReference: string | null;
  state: ParticipationState;
  name: string | null;
  email: string | null;
  mobile: string | null;
  note: string | null;
  messages: string[] | null;
}

/** The participation as GraphQL shows it: the REST view plus its UUID (GraphQL `id`, stable across state changes). */
export const toParticipationNode = (participation: Participation): ParticipationNodeView => participationNodeOf(participation, participation.appointment.reference);

export type ParticipationNodeView = ParticipationView & { uuid: string };

/** The GraphQL view of a participation's facts, from an entity or a row. */
export const participationNodeOf = (participation: ParticipationFacts & { id: string }, appointmentReference: string): ParticipationNodeView => ({
  uuid: participation.id,
  ...participationViewOf(participation, appointmentReference),
});

/** What a participation view shows of the participant: its customer, as an entity or as a row with these fields. */
export interface ParticipantFacts {
  reference: string;
  erasedAt: Date | string | null;
  userName: string | null;
  email: string | null;
  mobile: string | null;
  note: string | null;
}

/** What a participation view shows of a participation, from an entity or a row. */
export interface ParticipationFacts {
  reference: string | null;
  state: ParticipationState;
  messages: string[] | null;
  customer?: ParticipantFacts | null;
}

/** The participation as the /crms endpoints show it; name, e-mail and mobile come from its customer. */
export const toParticipationView = (participation: Participation): ParticipationView => participationViewOf(participation, participation.appointment.reference);

/** The /crms view of a participation's facts, from an entity or a row (see readAppointmentViews). */
export function participationViewOf(participation: ParticipationFacts, appointmentReference: string): ParticipationView {
  const customer = participation.customer;
  return {
    reference: participation.reference,
    appointmentReference,
    customerReference: customer?.erasedAt ? null : (customer?.reference ?? null),
    state: participation.state,
    name: customer?.userName ?? null,
    email: customer?.email ?? null,
    mobile: customer?.mobile ?? null,
    note: customer?.note ?? null,
    messages: participation.messages,
  };
}
