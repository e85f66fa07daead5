import { LockMode } from '@mikro-orm/core';
import { cancelWithParticipants } from '../appointments/appointment-cancel.service.js';
import { Appointment } from '../appointments/appointment.entity.js';
import { type Context, inTransaction, requireCrm } from '../kernel/context.js';
import { DomainError } from '../kernel/errors.js';
import { announceResourceTimeslots } from '../timeslots/timeslot-events.js';
import { getProvider } from '../providers/provider.service.js';
import { getResourceOf } from './resource.lookup.js';

/**
 * Deletes a resource (soft: `deletedAt` is set, so archived appointments keep
 * their history). Future ACTIVE appointments block it with a 409 unless
 * `ignoreFutureAppointments`; then, in the same transaction, each is
 * cancelled the way a CRM cancel does it (participations CANCELED,
 * cancellation e-mails and capacity events via the outbox) and archived.
 * Returns the number of appointments cancelled.
 */
export async function deleteResource(
  ctx: Context,
  providerReference: string,
  reference: string,
  options: { ignoreFutureAppointments?: boolean } = {},
): Promise<number> {
  const crm = requireCrm(ctx);
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    // Locking the resource row first makes a concurrent delete or update of it wait for this one.
    const resource = await getResourceOf(tx, provider, reference, { forUpdate: true });
    const now = tx.clock.now();
    const appointments = await tx.em.find(
      Appointment,
      { crm, resource, state: 'ACTIVE', start: { $gt: now } },
      { lockMode: LockMode.PESSIMISTIC_WRITE, orderBy: { id: 'asc' } },
    );
    if (appointments.length > 0 && !options.ignoreFutureAppointments) {
      throw new DomainError(
        'HAS_FUTURE_APPOINTMENTS',
        `Resource ${reference} has ${appointments.length} future appointment(s); cancel them first, or delete with ignoreFutureAppointments=true to cancel them and inform their participants`,
      );
    }
    for (const appointment of appointments) {
      appointment.archived = true;
      await cancelWithParticipants(tx, appointment, null);
    }
    resource.deletedAt = now;
    await announceResourceTimeslots(tx, resource);
    return appointments.length;
  });
}
