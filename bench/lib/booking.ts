import type { Slot } from './calendar.js';
import type { Api, HttpAnswer } from './http.js';

/** The public booking flow, as a consumer's browser calls it. */

let consumers = 0;
/** A new consumer e-mail address each call (a consumer may book a slot only once). */
export const nextConsumerEmail = (tag: string) => `${tag}-${process.pid}-${++consumers}@bench.example`;

/** create_appointment_with_consumer without a hold: claims the slot and books it in one request. */
export function bookDirectly(api: Api, slot: Slot, email: string, timeoutMs = 30_000): Promise<HttpAnswer> {
  return api.public('POST', `/resources/${slot.resourceId}/create_appointment_with_consumer`, {
    body: { start: slot.start, end: slot.end, timeslot_uuid: slot.timeslotId, product_uuid: slot.productId, email, firstname: 'Bench', lastname: 'Consumer', locale: 'de' },
    timeoutMs,
  });
}

/** reserve_appointment on a Bookable slot (its timeslot) or a LotAppointment (`appointmentId`). */
export function reserve(api: Api, slot: Slot & { appointmentId?: string | null }, timeoutMs = 30_000): Promise<HttpAnswer> {
  return api.public('POST', `/rest/1/resources/${slot.resourceId}/reserve_appointment`, {
    body: {
      ...(slot.appointmentId ? { appointment_uuid: slot.appointmentId } : { timeslot_uuid: slot.timeslotId }),
      product_uuid: slot.productId,
      from: slot.start,
      to: slot.end,
    },
    timeoutMs,
  });
}

/** Completes a hold: create_appointment_with_consumer with the reservation's appointment and placeholder. */
export function completeHold(api: Api, slot: Slot, reserved: any, email: string, timeoutMs = 30_000): Promise<HttpAnswer> {
  const participation = reserved.participation;
  return api.public('POST', `/resources/${slot.resourceId}/create_appointment_with_consumer`, {
    body: {
      start: slot.start,
      end: slot.end,
      timeslot_uuid: participation.appointment_uuid,
      product_uuid: slot.productId,
      placeholder_id: participation.customer_uuid,
      email,
      firstname: 'Bench',
      lastname: 'Consumer',
      locale: 'de',
    },
    timeoutMs,
  });
}

export const listingPath = (resourceId: string) => `/resources/${resourceId}/upcoming_bookables`;

/** GET upcoming_bookables with default parameters; `noCache` asks the service to compute it afresh. */
export function fetchListing(api: Api, resourceId: string, options: { noCache?: boolean; timeoutMs?: number } = {}): Promise<HttpAnswer> {
  return api.public('GET', listingPath(resourceId), {
    headers: options.noCache ? { 'cache-control': 'no-cache' } : {},
    timeoutMs: options.timeoutMs ?? 30_000,
  });
}

export interface Bookable {
  start: string;
  end: string;
  timeslot_uuid: string | null;
  appointment_uuid: string | null;
  product_uuid: string | null;
  resource_uuid: string;
  capacity: number;
  capacity_left: number;
  kind: string;
}

/** Every bookable of an upcoming_bookables answer (groups flattened; `public_visible` skipped). */
export function bookablesOf(body: unknown): Bookable[] {
  if (!body || typeof body !== 'object') return [];
  return Object.values(body as Record<string, unknown>).flatMap((group) => (Array.isArray(group) ? (group as Bookable[]) : []));
}

/** Bookables as slots to reserve: a LotAppointment keeps its appointment UUID. */
export function slotsOf(bookables: Bookable[], fallbackProductId: string): (Slot & { appointmentId: string | null })[] {
  return bookables
    .filter((b) => b.capacity_left > 0 && b.timeslot_uuid)
    .map((b) => ({
      resourceId: b.resource_uuid,
      timeslotId: b.timeslot_uuid!,
      appointmentId: b.kind === 'models.LotAppointment' ? b.appointment_uuid : null,
      productId: b.product_uuid ?? fallbackProductId,
      start: new Date(b.start).toISOString(),
      end: new Date(b.end).toISOString(),
    }));
}
