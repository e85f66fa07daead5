import { LockMode } from '@mikro-orm/core';
import { z } from 'zod';
import { Appointment } from '../appointments/appointment.entity.js';
import { announceCapacity, capacityLeft } from '../appointments/capacity-events.js';
import { Customer } from '../customers/customer.entity.js';
import { type Context, inTransaction, requireCrm } from '../kernel/context.js';
import { DomainError, notFound } from '../kernel/errors.js';
import { type MailTemplate, QUEUES } from '../kernel/jobs.js';
import { parseInput, requiredText } from '../kernel/validation.js';
import { notifyOutbox, writeOutbox } from '../outbox/outbox.service.js';
import { getProvider } from '../providers/provider.service.js';
import { OCCUPYING_STATES, PARTICIPATION_STATES, Participation, type ParticipationState } from './participation.entity.js';
import { placeHold } from './hold.service.js';
import { assertTransition } from './participation-transitions.js';

export const MESSAGE_MAX = 1024;

const createInput = z.object({
  reference: requiredText(),
  appointmentReference: requiredText(),
  customerReference: requiredText(),
  state: z.enum(PARTICIPATION_STATES),
  message: z.string().max(MESSAGE_MAX).nullish(),
});

const updateInput = z.object({
  state: z.enum(PARTICIPATION_STATES),
  message: z.string().max(MESSAGE_MAX).nullish(),
});

export interface CreateParticipationOptions {
  ignoreCapacity: boolean;
  onDuplicateRaise: boolean;
  sendMails: boolean;
}

/** Which mail a participation entering a state sends to its customer (when mails are allowed). */
const MAIL_ON_ENTER: Partial<Record<ParticipationState, MailTemplate>> = {
  BOOKED: 'participation-booked',
  CANCELED: 'participation-canceled',
  REQUESTED: 'booking-request-received',
};

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
  const input = parseInput(createInput, raw);
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const existing = await tx.em.findOne(Participation, { crm, reference: input.reference }, { populate: ['appointment', 'customer'] });
    if (existing) {
      if (options.onDuplicateRaise) throw new DomainError('CONFLICT', `Participation ${input.reference} already exists`);
      if (existing.appointment.provider.id !== provider.id) throw new DomainError('CONFLICT', `Participation ${input.reference} belongs to another provider`);
      if (existing.state !== input.state) await changeState(tx, existing, input.state, input.message ?? null, options.sendMails);
      await notifyOutbox(tx.em);
      return { participation: existing, created: false };
    }
    const appointment = await tx.em.findOne(
      Appointment,
      { crm, provider, reference: input.appointmentReference },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!appointment) throw notFound('Appointment', input.appointmentReference);
    if (appointment.state !== 'ACTIVE') throw new DomainError('CONFLICT', `Appointment ${appointment.reference} is cancelled`);
    const customer = await tx.em.findOne(Customer, { crm, provider, reference: input.customerReference, erasedAt: null });
    if (!customer) throw notFound('Customer', input.customerReference);
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
    if (options.sendMails) queueStateMail(tx, participation, input.state, input.message ?? null);
    if (occupies) await announceCapacity(tx, appointment);
    await notifyOutbox(tx.em);
    return { participation, created: true };
  });
}

/** Moves a participation to another state by the spec's transition table; e-mails only where the table says so. */
export async function updateParticipationState(
  ctx: Context,
  providerReference: string,
  reference: string,
  raw: unknown,
  sendMails: boolean,
): Promise<Participation> {
  const crm = requireCrm(ctx);
  const input = parseInput(updateInput, raw);
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const participation = await tx.em.findOne(Participation, { crm, reference, appointment: { provider } }, { populate: ['appointment', 'customer'] });
    if (!participation) throw notFound('Participation', reference);
    await changeState(tx, participation, input.state, input.message ?? null, sendMails);
    await notifyOutbox(tx.em);
    return participation;
  });
}

async function changeState(ctx: Context, participation: Participation, to: ParticipationState, message: string | null, sendMails: boolean): Promise<void> {
  const appointment = await ctx.em.findOneOrFail(Appointment, { id: participation.appointment.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  const { sendsMail, unchanged } = assertTransition(participation.state, to);
  if (unchanged) {
    // A repeated update (CRMs retry and upsert) keeps the participation as it is and sends nothing.
    return;
  }
  participation.state = to;
  participation.expiresAt = null;
  if (message) participation.messages = [...(participation.messages ?? []), message];
  await ctx.em.flush();
  if (sendsMail && sendMails) queueStateMail(ctx, participation, to, message);
  await announceCapacity(ctx, appointment);
}

function queueStateMail(ctx: Context, participation: Participation, state: ParticipationState, message: string | null): void {
  const template = MAIL_ON_ENTER[state];
  if (!template || !participation.customer?.email) return;
  writeOutbox(ctx.em, {
    kind: 'mail',
    topic: QUEUES.mail,
    payload: { template, params: { participationId: participation.id, appointmentId: participation.appointment.id }, message },
  });
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

/** The participation as the /crms endpoints show it; name, e-mail and mobile come from its customer. */
export const toParticipationView = (participation: Participation): ParticipationView => {
  const customer = participation.customer;
  return {
    reference: participation.reference,
    appointmentReference: participation.appointment.reference,
    customerReference: customer?.erasedAt ? null : (customer?.reference ?? null),
    state: participation.state,
    name: customer?.userName ?? null,
    email: customer?.email ?? null,
    mobile: customer?.mobile ?? null,
    note: customer?.note ?? null,
    messages: participation.messages,
  };
};
