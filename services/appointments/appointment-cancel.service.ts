import { LockMode } from '@mikro-orm/core';
import { z } from 'zod';
import { type Context, inTransaction, requireCrm } from '../kernel/context.js';
import { notFound, validationError } from '../kernel/errors.js';
import { QUEUES } from '../kernel/jobs.js';
import { announceAppointmentChange } from '../live/appointment-events.js';
import { parseInput } from '../kernel/validation.js';
import { writeOutbox } from '../outbox/outbox.service.js';
import { Participation } from '../participations/participation.entity.js';
import { getProvider } from '../providers/provider.service.js';
import { Appointment } from './appointment.entity.js';
import { APPOINTMENT_VIEW_POPULATE } from './appointment.view.js';
import { announceAppointmentRemoved, announceCapacity } from './capacity-events.js';

const deleteInput = z
  .object({ appointmentReference: z.string().trim().min(1).nullish(), seriesId: z.string().trim().min(1).nullish() })
  .refine((value) => Boolean(value.appointmentReference) !== Boolean(value.seriesId), {
    message: 'must contain either appointmentReference or seriesId',
  });
const cancelInput = z.object({ appointmentReference: z.string().trim().min(1) });

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
 * held or asked for a place. Cancelling again changes nothing and sends nothing.
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
 * Sets a locked appointment CANCELLED and its participations CANCELED,
 * writing a cancellation mail per informed participant and the capacity
 * event. Shared by appointment cancel and resource deletion.
 */
export async function cancelWithParticipants(ctx: Context, appointment: Appointment, message: string | null): Promise<void> {
  const participations = await ctx.em.find(Participation, { appointment, state: { $nin: ['CANCELED', 'DELETED'] } }, { populate: ['customer'] });
  appointment.state = 'CANCELLED';
  for (const participation of participations) {
    // Only people who booked or asked for a place hear of it; a hold ends silently (RESERVED -> CANCELED sends no mail).
    const informed = participation.state === 'BOOKED' || participation.state === 'REQUESTED';
    participation.state = 'CANCELED';
    participation.expiresAt = null;
    if (informed && participation.customer?.email) {
      writeOutbox(ctx.em, {
        kind: 'mail',
        topic: QUEUES.mail,
        payload: { template: 'appointment-cancelled', params: { appointmentId: appointment.id, participationId: participation.id }, message },
      });
    }
  }
  await ctx.em.flush();
  await announceCapacity(ctx, appointment);
  announceAppointmentChange(ctx, 'APPOINTMENT_CANCELLED', appointment);
}
