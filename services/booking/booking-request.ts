import { z } from 'zod';
import type { Context } from '../kernel/context.js';
import { validationError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import { parseDateTimeInput } from '../kernel/wall-clock.js';
import type { SlotProduct } from './bookability.js';
import type { BookingChannelSetting } from '../resources/booking-channel-setting.entity.js';
import { channelOffersProduct, type EffectiveChannel, effectiveChannel, parseChannelKey } from '../resources/booking-channel.service.js';
import type { Location } from '../kernel/address.js';
import { type ResolvedRow, resolveResourceRows } from './bookables-query.js';
import { assertRefCount, CHANNEL_SETTINGS_COLUMN, type ChannelSettingsJson, channelRowsOf } from './public-resource.js';

export const uuidField = (name: string) => z.string().trim().refine(isUuid, `must be a UUID (${name})`);

/** A product as the booking flow decides with it (see bookability.ts). */
export interface ScopeProduct extends SlotProduct {
  name: string;
  providerId: string;
}

/** A resource as the booking flow reads it: plain facts, no entity (one query resolves the refs). */
export interface ScopeResource {
  id: string;
  publicName: string;
  archived: boolean;
  address: Location | null;
  crm: { id: string; language: string };
  provider: { id: string; timeZone: string };
  contact: { id: string } | null;
  contactProfile: { id: string } | null;
}

/** A resource row with its channel settings, the products it lists and its provider's products (see scopeCatalogue). */
interface ScopeResourceRow extends ResolvedRow {
  public_name: string;
  archived: boolean;
  address: Location | null;
  contact_id: string | null;
  contact_profile_id: string | null;
  crm_language: string;
  settings: ChannelSettingsJson[];
  listed: string[];
  products: { id: string; provider_id: string; name: string; min: number | null; max: number | null; lead: number | null; follow: number | null }[];
}

const SCOPE_RESOURCE_COLUMNS = `, r.public_name, r.archived, r.address, r.contact_id, r.contact_profile_id, c.language as crm_language,
  ${CHANNEL_SETTINGS_COLUMN} as settings,
  (select coalesce(json_agg(l.product_id), '[]') from resource_product l where l.resource_id = r.id) as listed,
  (select coalesce(json_agg(p), '[]') from (select id, provider_id, name, min_duration as min, max_duration as max,
     lead_time_minutes as lead, follow_up_time_minutes as follow from product where provider_id = r.provider_id) p) as products`;

const scopeResource = (row: ScopeResourceRow): ScopeResource => ({
  id: row.id,
  publicName: row.public_name,
  archived: row.archived,
  address: row.address,
  crm: { id: row.crm_id, language: row.crm_language },
  provider: { id: row.provider_id, timeZone: row.time_zone },
  contact: row.contact_id ? { id: row.contact_id } : null,
  contactProfile: row.contact_profile_id ? { id: row.contact_profile_id } : null,
});

export interface BookingScope {
  main: ScopeResource;
  channelKey: ReturnType<typeof parseChannelKey>;
  /** The resources the request may book: open, and visible on the channel. */
  resources: ScopeResource[];
  channelOf(resource: ScopeResource): { channel: EffectiveChannel; rows: BookingChannelSetting[] };
  /** Products the resource offers on the channel (duration not yet checked), by name. */
  offeredOf(resource: ScopeResource): ScopeProduct[];
  /** A product of the main resource's provider by UUID; unknown is a 400. */
  productByUuid(uuid: string | null | undefined): ScopeProduct | null;
  /** Any product of the resources' providers by id (e.g. an appointment's). */
  productById(id: string | null): ScopeProduct | null;
  /** Whether some product of the resource (on any channel) has lead or follow-up time, so one booking can close other slots. */
  hasBlockedTime(resource: ScopeResource): boolean;
}

/**
 * What every booking-flow write needs, read before its transaction: the
 * resources the request may book, the channel and its settings, the products
 * each resource offers on it. Refuses archived resources and channels that
 * are not visible. One round trip of plain rows: the resources (by the
 * listing's rules, see resolveResourceRows) with their channel settings and
 * products.
 */
export async function bookingScope(ctx: Context, ref: string, extraRefs: string[], channelKeyRaw: string | null | undefined): Promise<BookingScope> {
  assertRefCount('ref', extraRefs);
  const rows = await resolveResourceRows<ScopeResourceRow>(ctx, ref, extraRefs, SCOPE_RESOURCE_COLUMNS);
  const resources = rows.map(scopeResource);
  const main = resources[0]!;
  const channelKey = parseChannelKey(channelKeyRaw);
  const catalogue = scopeCatalogue(rows);
  const channelOf = (resource: ScopeResource) => {
    const rows = catalogue.settings.get(resource.id) ?? [];
    return { channel: effectiveChannel(rows, channelKey), rows };
  };
  const bookable = resources.filter((r) => !r.archived && channelOf(r).channel.visible);
  if (!bookable.length) throw validationError('this resource cannot be booked on this channel');
  return {
    main,
    channelKey,
    resources: bookable,
    channelOf,
    offeredOf: (resource) => {
      const { channel, rows } = channelOf(resource);
      return catalogue.productsOf(resource).filter((p) => channelOffersProduct(rows, channel, p.id));
    },
    productById: (id) => (id ? (catalogue.byId.get(id) ?? null) : null),
    hasBlockedTime: (resource) => catalogue.productsOf(resource).some((p) => (p.leadTimeMinutes ?? 0) > 0 || (p.followUpTimeMinutes ?? 0) > 0),
    productByUuid: (uuid) => {
      if (!uuid) return null;
      const product = catalogue.byId.get(uuid);
      if (!product || product.providerId !== main.provider.id) throw validationError(`product_uuid: no product ${uuid} for this resource`);
      return product;
    },
  };
}

/**
 * The channel settings of the resources, the products of their providers
 * and which of them each resource lists: a resource that lists none offers
 * every product of its provider.
 */
function scopeCatalogue(rows: ScopeResourceRow[]) {
  const settings = new Map<string, BookingChannelSetting[]>();
  const listed = new Map<string, Set<string>>();
  const byId = new Map<string, ScopeProduct>();
  for (const row of rows) {
    settings.set(row.id, channelRowsOf(row.id, row.settings));
    listed.set(row.id, new Set(row.listed));
    for (const p of row.products) {
      byId.set(p.id, { id: p.id, providerId: p.provider_id, name: p.name, minDuration: p.min, maxDuration: p.max, leadTimeMinutes: p.lead, followUpTimeMinutes: p.follow });
    }
  }
  // By name as JavaScript compares (as the listing orders them), not by the database's collation.
  const products = [...byId.values()].sort((a, b) => a.name.localeCompare(b.name));
  return {
    settings,
    byId,
    productsOf(resource: ScopeResource): ScopeProduct[] {
      const own = listed.get(resource.id);
      return products.filter((p) => (own?.size ? own.has(p.id) : p.providerId === resource.provider.id));
    },
  };
}

/** Booking-flow instants: with offset or Z as given, without offset in the provider's zone. */
export const instantOf = (value: string, resource: ScopeResource, field: string): Date => parseDateTimeInput(value, resource.provider.timeZone, field);

/** reserve_appointment `from`/`to`: the spec gives them in UTC, so text without offset is UTC; an offset or Z is taken as given. */
export const utcInstantOf = (value: string, field: string): Date => parseDateTimeInput(value, 'UTC', field);
