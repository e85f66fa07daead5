import type { Appointment } from '../appointments/appointment.entity.js';
import type { Context } from '../kernel/context.js';
import type { Location } from '../kernel/address.js';
import { formatWithOffset } from '../kernel/wall-clock.js';
import type { Participation } from '../participations/participation.entity.js';
import { contactChannelFor } from '../contact-profiles/contact-profile.service.js';
import { cancelLinkUrl, signCancelToken } from './cancel-link.js';
import type { ConsumerBookingResult } from './consumer-booking.service.js';
import type { ReserveResult } from './reserve.service.js';

export const LOT_KIND = 'models.LotAppointment';

/** An address on one line, as the reserve response's `formatedAddress` shows it. */
export function formatAddress(location: Location | null): string | null {
  if (!location) return null;
  if (typeof location === 'string') return location;
  return `${location.street} ${location.number}, ${location.zip} ${location.city}`;
}

/** The documented answer of reserve_appointment; `customers` lists only the caller's own hold. */
export function toReserveView(result: ReserveResult) {
  const { participation, appointment, capacityLeft } = result;
  const tz = appointment.provider.timeZone;
  const from = formatWithOffset(appointment.start, tz);
  const to = formatWithOffset(appointment.end, tz);
  return {
    participation: {
      uuid: participation.id,
      appointment_uuid: appointment.id,
      timeslot_uuid: appointment.timeslot?.id ?? null,
      resource_uuid: appointment.resource.id,
      product_uuid: appointment.product?.id ?? null,
      from,
      to,
      appointment_capacity: appointment.capacity,
      appointment_capacity_left: capacityLeft,
      customer_uuid: participation.placeholderId,
      customer_mobile: null,
      customer_fullName: null,
      customer_email: null,
      customer_note: null,
      state: participation.state,
      formatedAddress: formatAddress(appointment.address),
      messages: participation.messages ?? [],
    },
    appointments: [
      {
        uuid: appointment.id,
        kind: LOT_KIND,
        product_id: appointment.product?.id ?? null,
        product_name: appointment.productName ?? appointment.product?.name ?? null,
        resource_id: appointment.resource.id,
        from,
        to,
        state: appointment.state,
        capacity: appointment.capacity,
        capacity_left: capacityLeft,
        customers: [
          {
            customer_placeholder_id: participation.placeholderId,
            customer_uuid: participation.placeholderId,
            participationState: participation.state,
            participation_id: participation.id,
          },
        ],
      },
    ],
  };
}

/** A signed link with which the consumer cancels this participation alone, valid until the appointment starts. */
export function cancelLinkFor(ctx: Context, participation: Participation, appointment: Appointment): string {
  const token = signCancelToken(ctx.config.linkSigningSecret, { participationId: participation.id, expiresAt: appointment.start });
  return cancelLinkUrl(ctx.config.publicBaseUrl, token);
}

/** The documented `createdAppointment`; `formattedStart`/`formattedEnd` follow `timeFormat`. */
export async function toCreatedAppointmentView(ctx: Context, result: ConsumerBookingResult) {
  const { participation, appointment, capacityLeft, resource, formatTime: format } = result;
  const tz = resource.provider.timeZone;
  const product = appointment.product;
  return {
    appointment_uuid: appointment.id,
    start: formatWithOffset(appointment.start, tz),
    end: formatWithOffset(appointment.end, tz),
    formattedStart: format(appointment.start),
    formattedEnd: format(appointment.end),
    timeslot_uuid: appointment.timeslot?.id ?? null,
    product_uuid: product?.id ?? null,
    resource_uuid: resource.id,
    contact_channel: await contactChannelFor(ctx, {
      contactProfile: appointment.contactProfile ?? resource.contactProfile,
      contact: appointment.contact ?? resource.contact,
    }),
    product_name: appointment.productName ?? product?.name ?? null,
    resource_name: resource.publicName,
    capacity: appointment.capacity,
    capacity_left: capacityLeft,
    products: product ? [{ uuid: product.id, name: product.name }] : [],
    kind: LOT_KIND,
    cancelLink: cancelLinkFor(ctx, participation, appointment),
  };
}
