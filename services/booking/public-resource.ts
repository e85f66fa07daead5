import { validationError } from '../kernel/errors.js';
import { PRODUCT_FIELDS, type ResolvedRow } from './bookables-query.js';
import type { BookingChannelSetting, BookingProcess, ChannelKey } from '../resources/booking-channel-setting.entity.js';

/**
 * What the booking flow (its scope, active_products, public_data, the
 * booking page, live calendars) reads of the resources a request names, as
 * columns for resolveResourceRows: plain rows in one query, no entities.
 */

/** A stored channel setting of a resource as CHANNEL_SETTINGS_COLUMN answers it. */
export interface ChannelSettingsJson {
  channel_key: ChannelKey;
  visible: boolean;
  booking_process: BookingProcess;
  product_ids: string[] | null;
  exclusive_product_ids: string[];
  accepted_customer_ids: string[];
}

/** The channel settings of resource `r` as a JSON array of ChannelSettingsJson, for a resource row's select list. */
export const CHANNEL_SETTINGS_COLUMN = `(select coalesce(json_agg(s), '[]') from (select channel_key, visible, booking_process, product_ids, exclusive_product_ids, accepted_customer_ids
     from booking_channel_setting where resource_id = r.id) s)`;

/** The settings rows effectiveChannel and channelOffersProduct read, from CHANNEL_SETTINGS_COLUMN's JSON. */
export const channelRowsOf = (resourceId: string, settings: ChannelSettingsJson[]): BookingChannelSetting[] =>
  settings.map(
    (s) =>
      ({
        resource: { id: resourceId },
        channelKey: s.channel_key,
        visible: s.visible,
        bookingProcess: s.booking_process,
        productIds: s.product_ids,
        exclusiveProductIds: s.exclusive_product_ids,
        acceptedCustomerIds: s.accepted_customer_ids,
      }) as BookingChannelSetting,
  );

/** A product as a resource offers it. */
export interface OfferedProductRow {
  id: string;
  name: string;
  description: string | null;
  min: number | null;
  max: number | null;
  lead: number | null;
  follow: number | null;
}

/** `json_build_object` of OfferedProductRow for product `alias`. */
export const PRODUCT_JSON = (alias: string) => `json_build_object(${PRODUCT_FIELDS(alias)}, 'description', ${alias}.description)`;

/** Whether a resource is archived, and its channel settings. */
export interface ChannelledRow extends ResolvedRow {
  archived: boolean;
  settings: ChannelSettingsJson[];
}

/** A resource with the products it offers: the ones it lists, else every product of its provider (by name, in the database's order). */
export interface OfferRow extends ChannelledRow {
  lists_products: boolean;
  products: OfferedProductRow[];
}

export const CHANNELLED_COLUMNS = `, r.archived, ${CHANNEL_SETTINGS_COLUMN} as settings`;

export const OFFER_COLUMNS = `${CHANNELLED_COLUMNS}, exists (select 1 from resource_product l where l.resource_id = r.id) as lists_products,
  (select coalesce(json_agg(${PRODUCT_JSON('pr')} order by pr.name), '[]') from product pr
    where pr.id in (select l.product_id from resource_product l where l.resource_id = r.id)
       or (pr.provider_id = r.provider_id and not exists (select 1 from resource_product l where l.resource_id = r.id))) as products`;

/** The products a resource offers (on any channel): the ones it lists by name as JavaScript compares, else its provider's in the database's order. */
export const offeredProducts = (resource: OfferRow): OfferedProductRow[] =>
  resource.lists_products ? [...resource.products].sort((a, b) => a.name.localeCompare(b.name)) : resource.products;

/** Most further resources (`ref`) or timeslots (`tslRefs`) one booking-flow request may name. */
export const PUBLIC_REFS_MAX = 20;

/** A 400 naming the parameter when a request lists more than `max` entries of it. */
export function assertRefCount(parameter: 'ref' | 'tslRefs', values: readonly unknown[], max = PUBLIC_REFS_MAX): void {
  const what = parameter === 'ref' ? 'further resources' : 'timeslots or appointments';
  if (values.length > max) throw validationError(`${parameter}: at most ${max} ${what} per request, got ${values.length}`);
}
