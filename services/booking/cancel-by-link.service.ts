import type { Appointment } from '../appointments/appointment.entity.js';
import { type Context, inTransaction } from '../kernel/context.js';
import { DomainError } from '../kernel/errors.js';
import { Participation } from '../participations/participation.entity.js';
import { changeParticipationState } from '../participations/participation-state.js';
import { verifyCancelToken } from './cancel-link.js';

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
  return { participation, appointment: participation.appointment, cancellable: isCancellable(participation, participation.appointment) };
}

const isCancellable = (participation: Participation, appointment: Appointment) =>
  (participation.state === 'BOOKED' || participation.state === 'REQUESTED') && appointment.state === 'ACTIVE';

/**
 * Cancels the one participation a cancel link names, with the usual mails
 * (to the consumer and to the provider). Cancelling twice changes nothing.
 */
export async function cancelByLink(ctx: Context, token: string): Promise<CancelLinkTarget> {
  const { participationId } = verifyCancelToken(ctx.config.linkSigningSecret, token, ctx.clock.now());
  return inTransaction(ctx, async (tx) => {
    const result = await changeParticipationState(tx, participationId, {
      to: 'CANCELED',
      sendMails: true,
      refused: 'skip',
      // The link cancels a booking or a request of an active appointment; anything else it leaves as it is.
      applies: (participation, appointment) => isCancellable(participation, appointment),
      mails: (participation, _previous, appointment) =>
        (['participation-canceled', 'provider-booking-cancelled'] as const).map((template) => ({
          template,
          params: { participationId: participation.id, appointmentId: appointment.id },
        })),
    });
    if (!result) throw new DomainError('LINK_INVALID', 'The cancel link is invalid');
    await tx.em.populate(result.appointment, ['resource', 'provider']);
    return { participation: result.participation, appointment: result.appointment, cancellable: false };
  });
}
