import { z } from 'zod';
import { announceCapacity } from '../appointments/capacity-events.js';
import type { Appointment } from '../appointments/appointment.entity.js';
import { type Context, inTransaction } from '../kernel/context.js';
import { validationError } from '../kernel/errors.js';
import { announceAppointmentChange } from '../live/appointment-events.js';
import { parseInput } from '../kernel/validation.js';
import { placeHold } from '../participations/hold.service.js';
import { Participation } from '../participations/participation.entity.js';
import { bookingScope, instantOf, productByUuid, uuidField } from './booking-request.js';
import { claimPlace, slotTaken } from './place-claim.js';

const reserveInput = z
  .object({
    timeslot_uuid: uuidField('timeslot_uuid').nullish(),
    appointment_uuid: uuidField('appointment_uuid').nullish(),
    product_uuid: uuidField('product_uuid'),
    from: z.string().trim().min(1),
    to: z.string().trim().min(1),
  })
  .refine((value) => value.timeslot_uuid || value.appointment_uuid, { message: 'timeslot_uuid or appointment_uuid is required', path: ['timeslot_uuid'] });

export interface ReserveResult {
  participation: Participation;
  appointment: Appointment;
  capacityLeft: number;
}

/**
 * Holds one place for the configured hold time (3 minutes): in one
 * transaction, locks what the place counts against, checks capacity, turns
 * a Bookable slot into a LotAppointment on first use and inserts a RESERVED
 * participation whose expiry job is written to the outbox.
 */
export async function reserveAppointment(
  ctx: Context,
  ref: string,
  raw: unknown,
  query: { extraRefs: string[]; channelKey?: string },
): Promise<ReserveResult> {
  const input = parseInput(reserveInput, raw);
  const scope = await bookingScope(ctx, ref, query.extraRefs, query.channelKey);
  const from = instantOf(input.from, scope.main, 'from');
  const to = instantOf(input.to, scope.main, 'to');
  if (to <= from) throw validationError('to must be after from');
  return inTransaction(scope.scoped, async (tx) => {
    const product = await productByUuid(tx, scope.main, input.product_uuid);
    const { appointment, capacityLeft } = await claimPlace(tx, {
      resources: scope.resources,
      channelOf: scope.channelOf,
      uuid: (input.appointment_uuid ?? input.timeslot_uuid)!,
      from,
      to,
      product,
    });
    if (capacityLeft <= 0) throw slotTaken();
    const participation = tx.em.create(Participation, { crm: appointment.crm, appointment, state: 'RESERVED', channelKey: scope.channelKey });
    placeHold(tx, participation);
    await tx.em.flush();
    await announceCapacity(tx, appointment);
    announceAppointmentChange(tx, 'PARTICIPATION_ADDED', appointment, participation);
    await tx.em.populate(appointment, ['provider', 'resource', 'product', 'timeslot']);
    return { participation, appointment, capacityLeft: capacityLeft - 1 };
  });
}
