import type { Context } from '../kernel/context.js';
import type { Location } from '../kernel/address.js';
import { formatWithOffset } from '../kernel/wall-clock.js';
import { contactChannelOf } from './bookables-query.js';
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
  const { participation, lot, resource, product, capacityLeft } = result;
  const tz = resource.provider.timeZone;
  const from = formatWithOffset(lot.start, tz);
  const to = formatWithOffset(lot.end, tz);
  return {
    participation: {
      uuid: participation.id,
      appointment_uuid: lot.id,
      timeslot_uuid: lot.timeslot_id,
      resource_uuid: lot.resource_id,
      product_uuid: lot.product_id,
      from,
      to,
      appointment_capacity: lot.capacity,
      appointment_capacity_left: capacityLeft,
      customer_uuid: participation.placeholderId,
      customer_mobile: null,
      customer_fullName: null,
      customer_email: null,
      customer_note: null,
      state: participation.state,
      formatedAddress: formatAddress(lot.address),
      messages: participation.messages ?? [],
    },
    appointments: [
      {
        uuid: lot.id,
        kind: LOT_KIND,
        product_id: lot.product_id,
        product_name: lot.product_name ?? product?.name ?? null,
        resource_id: lot.resource_id,
        from,
        to,
        state: lot.state,
        capacity: lot.capacity,
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
export function cancelLinkFor(ctx: Context, participationId: string, appointmentStart: Date): string {
  const token = signCancelToken(ctx.config.linkSigningSecret, { participationId, expiresAt: appointmentStart });
  return cancelLinkUrl(ctx.config.publicBaseUrl, token);
}

/** The documented `createdAppointment`; `formattedStart`/`formattedEnd` follow `timeFormat`. */
export async function toCreatedAppointmentView(ctx: Context, result: ConsumerBookingResult) {
  const { participation, lot, capacityLeft, resource, product, formatTime: format } = result;
  const tz = resource.provider.timeZone;
  const contactProfileId = lot.contact_profile_id ?? resource.contactProfile?.id ?? null;
  const contactId = lot.contact_id ?? resource.contact?.id ?? null;
  return {
    appointment_uuid: lot.id,
    start: formatWithOffset(lot.start, tz),
    end: formatWithOffset(lot.end, tz),
    formattedStart: format(lot.start),
    formattedEnd: format(lot.end),
    timeslot_uuid: lot.timeslot_id,
    product_uuid: lot.product_id,
    resource_uuid: resource.id,
    contact_channel: await contactChannelOf(ctx, { contactProfileId, contactId }),
    product_name: lot.product_name ?? product?.name ?? null,
    resource_name: resource.publicName,
    capacity: lot.capacity,
    capacity_left: capacityLeft,
    products: product ? [{ uuid: product.id, name: product.name }] : [],
    kind: LOT_KIND,
    cancelLink: cancelLinkFor(ctx, participation.id, lot.start),
  };
}
