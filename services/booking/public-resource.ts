import { validationError } from '../kernel/errors.js';
import type { ResolvedRow } from './bookables-query.js';
import { CHANNEL_SETTINGS_COLUMN, type ChannelSettingsJson } from './booking-request.js';

/**
 * What the booking flow's reads (active_products, public_data, the booking
 * page, live calendars) need of the resources a request names, as columns
 * for resolveResourceRows: plain rows in one query, no entities.
 */

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
export const PRODUCT_JSON = (alias: string) =>
  `json_build_object('id', ${alias}.id, 'name', ${alias}.name, 'description', ${alias}.description, 'min', ${alias}.min_duration,
     'max', ${alias}.max_duration, 'lead', ${alias}.lead_time_minutes, 'follow', ${alias}.follow_up_time_minutes)`;

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
