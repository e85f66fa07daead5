/**
 * The identity of a slot: its resource and its start and end instants. The
 * kind does not enter: a Bookable that gets its first booking becomes the
 * LotAppointment of the same slot, and stays the same object for a client
 * cache. GraphQL shows it as `Bookable.id`, in listings and in
 * `capacityChanged` alike.
 */
export function slotId(resourceUuid: string, start: string | Date, end: string | Date): string {
  return `${resourceUuid}/${instant(start)}/${instant(end)}`;
}

const instant = (value: string | Date): string => (typeof value === 'string' ? new Date(value) : value).toISOString();
