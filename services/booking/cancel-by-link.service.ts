import type { Appointment } from '../appointments/appointment.entity.js';
import { announceCapacity } from '../appointments/capacity-events.js';
import { type Context, inTransaction } from '../kernel/context.js';
import { DomainError } from '../kernel/errors.js';
import { QUEUES } from '../kernel/jobs.js';
import { announceAppointmentChange } from '../live/appointment-events.js';
import { writeOutbox } from '../outbox/outbox.service.js';
import { Participation } from '../participations/participation.entity.js';
import { verifyCancelToken } from './cancel-link.js';
import { lockAppointment } from './place-claim.js';

export interface CancelLinkTarget {
  participation: Participation;
  appointment: Appointment;
  cancellable: boolean;
}

/** What a cancel link points at; a tampered or expired link is refused (403). */
export async function inspectCancelLink(ctx: Context, token: string): Promise<CancelLinkTarget> {
  const { participationId } = verifyCancelToken(ctx.config.linkSigningSecret, token, ctx.clock.now());
  const participation = await ctx.em.findOne(Participation, { id: participationId }, { populate: ['appointment', 'appointment.resource', 'appointment.provider', 'customer'] });
  if (!participation) throw new DomainError('LINK_INVALID', 'The cancel link is invalid');
  return { participation, appointment: participation.appointment, cancellable: isCancellable(participation) };
}

const isCancellable = (participation: Participation) =>
  (participation.state === 'BOOKED' || participation.state === 'REQUESTED') && participation.appointment.state === 'ACTIVE';

/**
 * Cancels the one participation a cancel link names, with the usual mails
 * (to the consumer and to the provider). Cancelling twice changes nothing.
 */
export async function cancelByLink(ctx: Context, token: string): Promise<CancelLinkTarget> {
  const { participationId } = verifyCancelToken(ctx.config.linkSigningSecret, token, ctx.clock.now());
  return inTransaction(ctx, async (tx) => {
    const found = await tx.em.findOne(Participation, { id: participationId }, { fields: ['id', 'appointment'] });
    if (!found) throw new DomainError('LINK_INVALID', 'The cancel link is invalid');
    const appointment = (await lockAppointment(tx, { id: found.appointment.id }))!;
    const participation = await tx.em.findOneOrFail(Participation, { id: participationId }, { refresh: true, populate: ['customer'] });
    if (isCancellable(participation)) {
      const previous = participation.state;
      participation.state = 'CANCELED';
      await tx.em.flush();
      for (const template of ['participation-canceled', 'provider-booking-cancelled'] as const) {
        writeOutbox(tx.em, { kind: 'mail', topic: QUEUES.mail, payload: { template, params: { participationId, appointmentId: appointment.id } } });
      }
      await announceCapacity(tx, appointment);
      announceAppointmentChange(tx, 'PARTICIPATION_STATE_CHANGED', appointment, participation, previous);
    }
    return { participation, appointment, cancellable: false };
  });
}
