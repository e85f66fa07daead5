import { LockMode } from '@mikro-orm/core';
import { Appointment } from '../appointments/appointment.entity.js';
import { announceCapacity } from '../appointments/capacity-events.js';
import { capacityLeft } from '../appointments/occupancy.js';
import type { Context } from '../kernel/context.js';
import { DomainError } from '../kernel/errors.js';
import { type MailJob, type MailTemplate, QUEUES } from '../kernel/jobs.js';
import { announceAppointmentChange } from '../live/appointment-events.js';
import { writeOutbox } from '../outbox/outbox.service.js';
import { OCCUPYING_STATES, Participation, type ParticipationState } from './participation.entity.js';
import { assertTransition, transitionOf } from './participation-transitions.js';

/**
 * The one write path of a participation's state. Every writer (CRM update and
 * create-or-update, cancel link, appointment cancel, customer and resource
 * deletion) goes through `changeParticipationStates`: it locks the
 * appointment row, re-reads the participations under that lock, applies the
 * transition table to what it reads then, and writes the state, the mail rows
 * and the events in the caller's transaction. Two parallel requests therefore
 * see each other's result: the second CANCELED is a no-op without mail, and a
 * DELETED after a CANCELED is refused by the table instead of overwriting it.
 * Hold expiry, which removes a hold rather than changing its state, takes the
 * same lock and re-read through `lockParticipation`.
 */

/** Which participations of the appointment a change addresses. */
export type ParticipationSelection = { ids: readonly string[] } | 'all';

export interface StateChange {
  to: ParticipationState;
  /** Appended to the participation's messages (CRM update) and carried by the mail. */
  message?: string | null;
  /** The request's `sendMails`: false writes no mail even where the table sends one. */
  sendMails: boolean;
  /**
   * The mails a move the table mails for writes (default: the customer's mail
   * of the new state with `message`). Called under the lock with the state before.
   */
  mails?: (participation: Participation, previous: ParticipationState, appointment: Appointment) => MailJob[];
  /** A move the table refuses: `throw` answers TRANSITION_NOT_ALLOWED (409), `skip` leaves that participation as it is. */
  refused: 'throw' | 'skip';
  /** Participations this writer may change at all, judged on the re-read row; the others are left alone silently. */
  applies?: (participation: Participation, appointment: Appointment) => boolean;
  /** The CRM's `ignoreCapacity`: an expired hold may come back to BOOKED even when the appointment is full. */
  ignoreCapacity?: boolean;
  /** One PARTICIPATION_STATE_CHANGED per changed participation (default); an appointment cancel announces itself instead. */
  participationEvents?: boolean;
  /** The caller changed the appointment row too (cancelled it): its capacity is announced even when no participation changed. */
  appointmentChanged?: boolean;
}

export interface AppliedChange {
  participation: Participation;
  previous: ParticipationState;
}

export interface StateChangeResult {
  appointment: Appointment;
  /** Every selected participation as re-read (and possibly changed) under the lock. */
  participations: Participation[];
  changed: AppliedChange[];
}

/** Which mail a participation entering a state sends to its customer (when the table and `sendMails` allow it). */
const MAIL_ON_ENTER: Partial<Record<ParticipationState, MailTemplate>> = {
  BOOKED: 'participation-booked',
  CANCELED: 'participation-canceled',
  REQUESTED: 'booking-request-received',
};

/** The customer's mail of a participation that entered `state`, or none (no template, no e-mail address). */
export function stateMail(participation: Participation, state: ParticipationState, message: string | null): MailJob[] {
  const template = MAIL_ON_ENTER[state];
  if (!template || !participation.customer?.email) return [];
  return [{ template, params: { participationId: participation.id, appointmentId: participation.appointment.id }, message }];
}

export function writeMails(ctx: Context, mails: readonly MailJob[]): void {
  for (const mail of mails) writeOutbox(ctx.em, { kind: 'mail', topic: QUEUES.mail, payload: { ...mail } });
}

/**
 * Locks an appointment row for a state change. An appointment entity the
 * caller already loaded (and may have changed, e.g. set CANCELLED) is locked
 * without reloading it; an id is loaded fresh under the lock.
 */
async function lockAppointmentRow(ctx: Context, appointment: Appointment | string): Promise<Appointment | null> {
  if (typeof appointment === 'string') {
    return ctx.em.findOne(Appointment, { id: appointment }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  }
  const rows = await ctx.em.execute<{ id: string }[]>('select id from appointment where id = ? for update', [appointment.id]);
  return rows.length ? appointment : null;
}

/**
 * Locks the appointment of a participation and re-reads the participation
 * under that lock (appointment first: the lock order of every capacity write).
 * Null when either is gone.
 */
export async function lockParticipation(ctx: Context, participationId: string): Promise<{ appointment: Appointment; participation: Participation } | null> {
  const appointmentId = await appointmentIdOf(ctx, participationId);
  if (!appointmentId) return null;
  const appointment = await lockAppointmentRow(ctx, appointmentId);
  const participation = appointment && (await ctx.em.findOne(Participation, { id: participationId }, { refresh: true, populate: ['customer'] }));
  return appointment && participation ? { appointment, participation } : null;
}

/** A participation never moves to another appointment, so its appointment may be read before the lock. */
async function appointmentIdOf(ctx: Context, participationId: string): Promise<string | null> {
  const rows = await ctx.em.execute<{ appointment_id: string }[]>('select appointment_id from participation where id = ?', [participationId]);
  return rows[0]?.appointment_id ?? null;
}

/** `changeParticipationStates` for one participation, found by id; null when it is gone. */
export async function changeParticipationState(ctx: Context, participationId: string, change: StateChange): Promise<(StateChangeResult & { participation: Participation }) | null> {
  const appointmentId = await appointmentIdOf(ctx, participationId);
  if (!appointmentId) return null;
  const result = await changeParticipationStates(ctx, appointmentId, { ids: [participationId] }, change);
  const participation = result?.participations[0];
  return result && participation ? { ...result, participation } : null;
}

/**
 * Moves the selected participations of one appointment to `change.to` by the
 * transition table, under the appointment's row lock, judged on the rows as
 * they read under that lock. Writes the state (holds stop counting), the
 * mails the table sends, one capacity event for the appointment and the CRM
 * feed events. Null when the appointment is gone.
 */
export async function changeParticipationStates(
  ctx: Context,
  appointmentOrId: Appointment | string,
  selection: ParticipationSelection,
  change: StateChange,
): Promise<StateChangeResult | null> {
  const appointment = await lockAppointmentRow(ctx, appointmentOrId);
  if (!appointment) return null;
  const where = selection === 'all' ? { appointment } : { appointment, id: { $in: [...selection.ids] } };
  const participations = await ctx.em.find(Participation, where, { refresh: true, populate: ['customer'], orderBy: { createdAt: 'asc', id: 'asc' } });
  const now = ctx.clock.now();
  const changed: AppliedChange[] = [];
  const mails: MailJob[] = [];
  for (const participation of participations) {
    if (change.applies && !change.applies(participation, appointment)) continue;
    const previous = participation.state;
    if (change.refused === 'skip' && !transitionOf(previous, change.to).allowed) continue;
    const { sendsMail, unchanged } = assertTransition(previous, change.to);
    // Setting the state a participation already has changes nothing and mails nothing (CRMs retry and upsert).
    if (unchanged) continue;
    // Only a hold whose time ran out can come back to take a place (RESERVED -> BOOKED); it no longer counts, so
    // the place must still be free, as when a consumer completes a booking after the hold expired.
    const takesNewPlace = OCCUPYING_STATES.includes(change.to) && !occupiesPlace(participation, now);
    if (takesNewPlace && !change.ignoreCapacity) {
      await ctx.em.flush();
      if ((await capacityLeft(ctx, appointment)) <= 0) {
        throw new DomainError('CAPACITY_EXHAUSTED', `Appointment ${appointment.reference} is full (capacity ${appointment.capacity}) and the hold has expired`);
      }
    }
    participation.state = change.to;
    participation.expiresAt = null;
    if (change.message) participation.messages = [...(participation.messages ?? []), change.message];
    changed.push({ participation, previous });
    if (sendsMail && change.sendMails) {
      mails.push(...(change.mails ? change.mails(participation, previous, appointment) : stateMail(participation, change.to, change.message ?? null)));
    }
  }
  await ctx.em.flush();
  writeMails(ctx, mails);
  if (changed.length || change.appointmentChanged) await announceCapacity(ctx, appointment);
  if (changed.length) {
    if (change.participationEvents !== false) {
      for (const { participation, previous } of changed) announceAppointmentChange(ctx, 'PARTICIPATION_STATE_CHANGED', appointment, participation, previous);
    }
  }
  return { appointment, participations, changed };
}

/** Whether the participation counts against the capacity now (a hold only until it expires). */
function occupiesPlace(participation: Participation, now: Date): boolean {
  if (participation.state === 'RESERVED') return participation.expiresAt !== null && participation.expiresAt > now;
  return OCCUPYING_STATES.includes(participation.state);
}
