import { z } from 'zod';
import { performance } from 'node:perf_hooks';
import type { Context } from '../kernel/context.js';
import type { SqlGuard } from '../kernel/sql.js';
import { validationError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import { parseDateTimeInput } from '../kernel/wall-clock.js';
import type { SlotProduct } from './bookability.js';
import type { BookingChannelSetting, BookingProcess, ChannelKey } from '../resources/booking-channel-setting.entity.js';
import { channelOffersProduct, type EffectiveChannel, effectiveChannel, parseChannelKey } from '../resources/booking-channel.service.js';
import type { Location } from '../kernel/address.js';
import { type ResolvedRow, resolveResourceRows } from './bookables-query.js';
import { assertRefCount } from './public-resource.js';

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
  settings: { channel_key: ChannelKey; visible: boolean; booking_process: BookingProcess; product_ids: string[] | null; exclusive_product_ids: string[]; accepted_customer_ids: string[] }[];
  listed: string[];
  products: { id: string; provider_id: string; name: string; min: number | null; max: number | null; lead: number | null; follow: number | null }[];
  /** The provider's catalogue version when read (int8 as text; see Migration20261123110000_CatalogueVersions). */
  catalogue_version: string;
}

const SCOPE_RESOURCE_COLUMNS = `, r.public_name, r.archived, r.address, r.contact_id, r.contact_profile_id, c.language as crm_language,
  (select coalesce(json_agg(s), '[]') from (select channel_key, visible, booking_process, product_ids, exclusive_product_ids, accepted_customer_ids
     from booking_channel_setting where resource_id = r.id) s) as settings,
  (select coalesce(json_agg(l.product_id), '[]') from resource_product l where l.resource_id = r.id) as listed,
  (select coalesce(json_agg(p), '[]') from (select id, provider_id, name, min_duration as min, max_duration as max,
     lead_time_minutes as lead, follow_up_time_minutes as follow from product where provider_id = r.provider_id) p) as products,
  coalesce((select v.version from provider_catalogue v where v.provider_id = r.provider_id), 0) as catalogue_version`;

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
  /** Read from this process's cache: the check its booking transaction sends with BEGIN (catalogue versions unchanged). */
  guard?: SqlGuard;
}

/** Thrown by a booking transaction whose scope came from the cache and is no longer the catalogue's (see withBookingScope). */
export class StaleScope extends Error {
  constructor() {
    super('the booking scope changed since it was cached');
  }
}

/**
 * Runs `use` with the request's scope from this process's cache (or read
 * and cached). A booking transaction sends the scope's guard with its BEGIN:
 * when a CRM changed the providers' resources, channel settings, products,
 * time zone or language since the scope was read, the guard fails
 * (StaleScope). Then, and whenever `use` fails before a transaction has
 * confirmed the cached scope (a refusal decided on it), `use` runs once more
 * with the scope read afresh. The caller's work before its transaction must
 * therefore be safe to run twice.
 */
export async function withBookingScope<T>(
  ctx: Context,
  ref: string,
  extraRefs: string[],
  channelKeyRaw: string | null | undefined,
  use: (scope: BookingScope) => Promise<T>,
): Promise<T> {
  assertRefCount('ref', extraRefs);
  const first = await scopeRows(ctx, ref, extraRefs);
  const guard = first.guard;
  if (!guard) return use(scopeOf(first.rows, channelKeyRaw));
  try {
    return await use(scopeOf(first.rows, channelKeyRaw, guard));
  } catch (error) {
    if (!(error instanceof StaleScope) && guard.confirmed) throw error;
    forgetScope(ctx, ref, extraRefs);
    return use(scopeOf((await scopeRows(ctx, ref, extraRefs)).rows, channelKeyRaw));
  }
}

/** Scope rows kept per process and database, at most this many requests' worth (least recently used go first). */
export const SCOPE_CACHE_ENTRIES = 1_000;
/** And at most this long: the guard keeps them right, the age only bounds what an idle entry holds on to. */
export const SCOPE_CACHE_MS = 60_000;

interface CachedScopeRows {
  rows: ScopeResourceRow[];
  storedAt: number;
}
/** Per ORM (one database), so processes and tests with several databases never mix their rows. */
const scopeCaches = new WeakMap<object, Map<string, CachedScopeRows>>();

function scopeCacheOf(ctx: Context): Map<string, CachedScopeRows> {
  const owner = ctx.em.getKnex().client as object;
  let cache = scopeCaches.get(owner);
  if (!cache) scopeCaches.set(owner, (cache = new Map()));
  return cache;
}

const scopeKey = (ref: string, extraRefs: string[]) => JSON.stringify([ref, ...extraRefs]);

function forgetScope(ctx: Context, ref: string, extraRefs: string[]): void {
  scopeCacheOf(ctx).delete(scopeKey(ref, extraRefs));
}

/** The scope rows of a request: from the cache (with the guard that checks them), or read (and cached when every ref was found). */
async function scopeRows(ctx: Context, ref: string, extraRefs: string[]): Promise<{ rows: ScopeResourceRow[]; guard?: ScopeGuard }> {
  const cache = scopeCacheOf(ctx);
  const key = scopeKey(ref, extraRefs);
  const hit = cache.get(key);
  if (hit && performance.now() - hit.storedAt < SCOPE_CACHE_MS) {
    cache.delete(key);
    cache.set(key, hit);
    return { rows: hit.rows, guard: catalogueGuard(hit.rows) };
  }
  const rows = await resolveResourceRows<ScopeResourceRow>(ctx, ref, extraRefs, SCOPE_RESOURCE_COLUMNS);
  // A ref that named nothing may name a resource of another provider tomorrow, which no version of these providers tells.
  if (rows.length === 1 + extraRefs.length) {
    cache.delete(key);
    cache.set(key, { rows, storedAt: performance.now() });
    if (cache.size > SCOPE_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  }
  return { rows };
}

/** A guard whose check has passed in a transaction: what was decided on the cached rows stands. */
interface ScopeGuard extends SqlGuard {
  confirmed: boolean;
}

/** Whether the catalogue versions of the rows' providers are still those read with them. */
function catalogueGuard(rows: ScopeResourceRow[]): ScopeGuard {
  const versions = new Map(rows.map((row) => [row.provider_id, String(row.catalogue_version)]));
  const guard: ScopeGuard = {
    confirmed: false,
    text: `select count(*)::int as changed from unnest(?::uuid[], ?::bigint[]) as x(provider_id, version)
             left join provider_catalogue v on v.provider_id = x.provider_id where coalesce(v.version, 0) <> x.version`,
    params: [`{${[...versions.keys()].join(',')}}`, `{${[...versions.values()].join(',')}}`],
    holds: (result) => (guard.confirmed = Number(result[0]?.changed) === 0),
    error: () => new StaleScope(),
  };
  return guard;
}

/**
 * What every booking-flow write needs, read before its transaction: the
 * resources the request may book, the channel and its settings, the products
 * each resource offers on it. Refuses archived resources and channels that
 * are not visible. Built from one query's plain rows (see scopeRows): the
 * resources (by the listing's rules, see resolveResourceRows) with their
 * channel settings and products; `guard` when they came from the cache.
 */
function scopeOf(rows: ScopeResourceRow[], channelKeyRaw: string | null | undefined, guard?: SqlGuard): BookingScope {
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
    guard,
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
    settings.set(
      row.id,
      row.settings.map(
        (s) =>
          ({
            resource: { id: row.id },
            channelKey: s.channel_key,
            visible: s.visible,
            bookingProcess: s.booking_process,
            productIds: s.product_ids,
            exclusiveProductIds: s.exclusive_product_ids,
            acceptedCustomerIds: s.accepted_customer_ids,
          }) as BookingChannelSetting,
      ),
    );
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
