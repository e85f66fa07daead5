import { type FilterQuery, LockMode } from '@mikro-orm/core';
import { Appointment } from '../appointments/appointment.entity.js';
import type { Context } from '../kernel/context.js';
import { DomainError, validationError } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import type { Product } from '../products/product.entity.js';
import type { BookingChannelSetting } from '../resources/booking-channel-setting.entity.js';
import { channelOffersProduct, type EffectiveChannel } from '../resources/booking-channel.service.js';
import type { Resource } from '../resources/resource.entity.js';
import { keepsLeadAndFollowUp, slotAt } from '../timeslots/slot-grid.js';
import { Timeslot } from '../timeslots/timeslot.entity.js';
import { capacityLeft } from '../appointments/occupancy.js';
import { fitsRaster, productsOf } from './bookables.service.js';

export const SLOT_TAKEN_MESSAGE = 'Das überlappt mit einem anderen Termin.';
/** The documented refusal when the place is gone: 412 with errorCode 201. */
export const slotTaken = () => new DomainError('SLOT_TAKEN', SLOT_TAKEN_MESSAGE, '201');

export interface ClaimRequest {
  /** Resources the request may book (the path's resource plus `ref` query resources). */
  resources: Resource[];
  channelOf(resource: Resource): { channel: EffectiveChannel; rows: BookingChannelSetting[] };
  /** A timeslot UUID (slot of kind Bookable) or an appointment UUID (kind LotAppointment). */
  uuid: string;
  from: Date;
  to: Date;
  product: Product | null;
}

/**
 * Finds and locks the appointment a booking-flow request counts against,
 * creating it from the timeslot on the first booking of a slot. Creation is
 * serialised per resource with a transaction-scoped advisory lock and the
 * (timeslot, start) unique constraint makes a second appointment impossible;
 * an existing appointment is locked with FOR UPDATE. Refuses with 412 when
 * no place is left.
 */
export async function claimPlace(ctx: Context, request: ClaimRequest): Promise<{ appointment: Appointment; created: boolean; capacityLeft: number }> {
  const now = ctx.clock.now();
  // Holds the resources against a concurrent delete or archive until this booking commits.
  const live = await ctx.em.execute<{ id: string }[]>(
    `select id from resource where id in (${request.resources.map(() => '?').join(',')}) and deleted_at is null and archived = false for share`,
    request.resources.map((r) => r.id),
  );
  const resourceIds = live.map((row) => row.id);
  if (!resourceIds.length) throw slotTaken();
  const appointment = await lockAppointment(ctx, { id: request.uuid, resource: { $in: resourceIds } });
  if (appointment) {
    if (appointment.start.getTime() !== request.from.getTime() || appointment.end.getTime() !== request.to.getTime()) {
      throw validationError('from and to must be the start and end of the appointment');
    }
    assertBookable(appointment, now);
    const resource = request.resources.find((r) => r.id === appointment.resource.id)!;
    const { channel, rows } = request.channelOf(resource);
    if (appointment.product && !channelOffersProduct(rows, channel, appointment.product.id)) {
      throw validationError('product_uuid: this product is not offered on this channel');
    }
    if (request.product && appointment.product && request.product.id !== appointment.product.id) {
      throw validationError('product_uuid does not match the appointment');
    }
    return { appointment, created: false, capacityLeft: await capacityLeft(ctx, appointment) };
  }

  const timeslot = await ctx.em.findOne(Timeslot, { id: request.uuid, resource: { $in: resourceIds } }, { populate: ['resource'] });
  if (!timeslot) throw validationError('timeslot_uuid: no open timeslot or appointment with this UUID for this resource');
  if (timeslot.state !== 'BOOKABLE') throw validationError('timeslot_uuid: this timeslot is not open for booking');
  const slot = slotAt(timeslot, request.from, request.to);
  if (!slot) throw validationError('from and to must be one slot of the timeslot grid');
  if (slot.start <= now) throw validationError('from lies in the past');
  const resource = request.resources.find((r) => r.id === timeslot.resource.id)!;
  await ctx.em.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`resource:${resource.id}`]);

  const lot = await lockAppointment(ctx, { timeslot, start: slot.start });
  if (lot) {
    // Somebody booked this slot first; later bookings share its appointment.
    assertBookable(lot, now);
    if (request.product && lot.product && request.product.id !== lot.product.id) throw slotTaken();
    return { appointment: lot, created: false, capacityLeft: await capacityLeft(ctx, lot) };
  }

  const { channel, rows } = request.channelOf(resource);
  // The products upcoming_bookables offers for this slot, by the same rules.
  const offered = (await productsOf(ctx, resource)).filter((p) => fitsRaster(p, timeslot.raster) && channelOffersProduct(rows, channel, p.id));
  if (request.product && !offered.some((p) => p.id === request.product!.id)) {
    throw validationError('product_uuid: this product is not offered for this slot on this channel');
  }
  const busy = await ctx.em.find(Appointment, {
    resource,
    state: 'ACTIVE',
    archived: false,
    start: { $lt: timeslot.end },
    end: { $gt: timeslot.start },
  });
  if (busy.some((a) => a.start < slot.end && a.end > slot.start)) throw slotTaken();
  const fitting = offered.filter((p) => keepsLeadAndFollowUp(slot, p.leadTimeMinutes, p.followUpTimeMinutes, busy, timeslot));
  const product = request.product ?? (fitting.length === 1 ? fitting[0]! : null);
  if (!product && fitting.length > 1) throw validationError('product_uuid is required: this slot offers several products');
  // A product whose lead or follow-up time does not fit (any more) makes the slot taken for it.
  if (!product || !fitting.some((p) => p.id === product.id)) throw slotTaken();

  const created = ctx.em.create(Appointment, {
    crm: resource.crm,
    provider: resource.provider,
    resource,
    product,
    timeslot,
    reference: `lot-${newId()}`,
    start: slot.start,
    end: slot.end,
    capacity: timeslot.defaultCapacity,
    acceptBookings: timeslot.defaultAcceptBookings,
    address: timeslot.address ?? resource.address,
    contact: resource.contact,
    contactProfile: resource.contactProfile,
  });
  await ctx.em.flush();
  return { appointment: created, created: true, capacityLeft: created.capacity };
}

/**
 * Locks one appointment row FOR UPDATE and then loads its relations. The
 * lock query must not join: FOR UPDATE would also lock the joined resource
 * row, which concurrent bookings hold FOR SHARE, and deadlock with them.
 */
export async function lockAppointment(ctx: Context, where: FilterQuery<Appointment>): Promise<Appointment | null> {
  const appointment = await ctx.em.findOne(Appointment, where, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  return appointment && ctx.em.populate(appointment, ['resource', 'product', 'timeslot', 'provider']);
}

function assertBookable(appointment: Appointment, now: Date): void {
  if (appointment.state !== 'ACTIVE' || appointment.archived || !appointment.acceptBookings || appointment.start <= now) throw slotTaken();
  if (appointment.timeslot && appointment.timeslot.state !== 'BOOKABLE') throw slotTaken();
}
