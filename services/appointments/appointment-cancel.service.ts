import { LockMode } from '@mikro-orm/core';
import { z } from 'zod';
import { type Context, inTransaction, requireCrm } from '../kernel/context.js';
import { notFound, validationError } from '../kernel/errors.js';
import { announceAppointmentChange } from '../live/appointment-events.js';
import { parseInput } from '../kernel/validation.js';
import { Participation } from '../participations/participation.entity.js';
import { changeParticipationStates } from '../participations/participation-state.js';
import { getProvider } from '../providers/provider.service.js';
import { Appointment } from './appointment.entity.js';
import { APPOINTMENT_VIEW_POPULATE } from './appointment.view.js';
import { announceAppointmentRemoved } from './capacity-events.js';

export const deleteInput = z
  .object({ appointmentReference: z.string().trim().min(1).nullish(), seriesId: z.string().trim().min(1).nullish() })
  .refine((value) => Boolean(value.appointmentReference) !== Boolean(value.seriesId), {
    message: 'must contain either appointmentReference or seriesId',
  });
export const cancelInput = z.object({ appointmentReference: z.string().trim().min(1) });

/**
 * Deletes an appointment, or every appointment of a series, without telling
 * anybody (administrative correction). Participations go with it; live
 * calendars still hear that the places are gone.
 */
export async function deleteAppointmentsSilently(ctx: Context, providerReference: string, raw: unknown): Promise<number> {
  const crm = requireCrm(ctx);
  const input = parseInput(deleteInput, raw);
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const where = input.appointmentReference ? { crm, provider, reference: input.appointmentReference } : { crm, provider, seriesId: input.seriesId! };
    const appointments = await tx.em.find(Appointment, where, { lockMode: LockMode.PESSIMISTIC_WRITE, orderBy: { id: 'asc' } });
    if (!appointments.length) throw notFound(input.appointmentReference ? 'Appointment' : 'Series', input.appointmentReference ?? input.seriesId!);
    for (const appointment of appointments) {
      appointment.state = 'CANCELLED';
      await announceAppointmentRemoved(tx, appointment, appointments);
      announceAppointmentChange(tx, 'APPOINTMENT_DELETED', appointment);
    }
    await tx.em.nativeDelete(Participation, { appointment: { $in: appointments } });
    await tx.em.nativeDelete(Appointment, { id: { $in: appointments.map((a) => a.id) } });
    return appointments.length;
  });
}

/**
 * Cancels an appointment: state CANCELLED, every participation CANCELED and
 * a cancellation e-mail (with the caller's message) to each participant who
 * booked or asked for a place. Cancelling again changes nothing and sends nothing.
 */
export async function cancelAppointment(ctx: Context, providerReference: string, raw: unknown, message: string | null): Promise<Appointment> {
  const crm = requireCrm(ctx);
  const input = parseInput(cancelInput, raw);
  if (message && message.length > 5000) throw validationError('message must be at most 5000 characters');
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const appointment = await tx.em.findOne(Appointment, { crm, provider, reference: input.appointmentReference }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!appointment) throw notFound('Appointment', input.appointmentReference);
    if (appointment.state !== 'CANCELLED') {
      await cancelWithParticipants(tx, appointment, message);
    }
    await tx.em.populate(appointment, APPOINTMENT_VIEW_POPULATE, { refresh: true });
    return appointment;
  });
}

/**
 * Sets a locked appointment CANCELLED and every participation CANCELED
 * (spec rule 4, DELETED ones included), through the one participation write
 * path. Who booked or asked for a place gets the cancellation mail (with the
 * caller's message); RESERVED -> CANCELED and DELETED -> CANCELED send none,
 * as the transition table says. Shared by appointment cancel and resource
 * deletion.
 */
export async function cancelWithParticipants(ctx: Context, appointment: Appointment, message: string | null): Promise<void> {
  appointment.state = 'CANCELLED';
  await changeParticipationStates(ctx, appointment, 'all', {
    to: 'CANCELED',
    sendMails: true,
    refused: 'skip',
    mails: (participation) =>
      participation.customer?.email
        ? [{ template: 'appointment-cancelled', params: { appointmentId: appointment.id, participationId: participation.id }, message }]
        : [],
    participationEvents: false,
    appointmentChanged: true,
  });
  announceAppointmentChange(ctx, 'APPOINTMENT_CANCELLED', appointment);
}
