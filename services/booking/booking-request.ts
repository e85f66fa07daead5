import { z } from 'zod';
import type { Context } from '../kernel/context.js';
import { validationError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import { parseDateTimeInput } from '../kernel/wall-clock.js';
import { Product } from '../products/product.entity.js';
import type { BookingChannelSetting } from '../resources/booking-channel-setting.entity.js';
import { channelOffersProduct, channelSettingsOf, type EffectiveChannel, effectiveChannel, parseChannelKey } from '../resources/booking-channel.service.js';
import type { Resource } from '../resources/resource.entity.js';
import { resolvePublicResources, scopedTo } from './public-resource.js';

export const uuidField = (name: string) => z.string().trim().refine(isUuid, `must be a UUID (${name})`);

export interface BookingScope {
  main: Resource;
  scoped: Context;
  channelKey: ReturnType<typeof parseChannelKey>;
  /** The resources the request may book: open, and visible on the channel. */
  resources: Resource[];
  channelOf(resource: Resource): { channel: EffectiveChannel; rows: BookingChannelSetting[] };
  /** Products the resource offers on the channel (duration not yet checked), by name. */
  offeredOf(resource: Resource): Product[];
  /** A product of the main resource's provider by UUID; unknown is a 400. */
  productByUuid(uuid: string | null | undefined): Product | null;
  /** Any product of the resources' providers by id (e.g. an appointment's). */
  productById(id: string | null): Product | null;
  /** Whether some product of the resource (on any channel) has lead or follow-up time, so one booking can close other slots. */
  hasBlockedTime(resource: Resource): boolean;
}

/**
 * What every booking-flow write needs, read before its transaction: the
 * resources the request may book, the channel and its settings, the products
 * each resource offers on it, the CRM-scoped context. Refuses archived
 * resources and channels that are not visible.
 */
export async function bookingScope(ctx: Context, ref: string, extraRefs: string[], channelKeyRaw: string | null | undefined): Promise<BookingScope> {
  const resources = await resolvePublicResources(ctx, ref, extraRefs);
  const main = resources[0];
  const scoped = scopedTo(ctx, main);
  const channelKey = parseChannelKey(channelKeyRaw);
  const [settings, catalogue] = await Promise.all([channelSettingsOf(scoped, resources), productCatalogue(scoped, resources)]);
  const channelOf = (resource: Resource) => {
    const rows = settings.get(resource.id)!;
    return { channel: effectiveChannel(rows, channelKey), rows };
  };
  const bookable = resources.filter((r) => !r.archived && channelOf(r).channel.visible);
  if (!bookable.length) throw validationError('this resource cannot be booked on this channel');
  return {
    main,
    scoped,
    channelKey,
    resources: bookable,
    channelOf,
    offeredOf: (resource) => {
      const { channel, rows } = channelOf(resource);
      return catalogue.productsOf(resource).filter((p) => channelOffersProduct(rows, channel, p.id));
    },
    hasBlockedTime: (resource) => catalogue.productsOf(resource).some((p) => (p.leadTimeMinutes ?? 0) > 0 || (p.followUpTimeMinutes ?? 0) > 0),
    productById: (id) => (id ? (catalogue.byId.get(id) ?? null) : null),
    productByUuid: (uuid) => {
      if (!uuid) return null;
      const product = catalogue.byId.get(uuid);
      if (!product || product.provider.id !== main.provider.id) throw validationError(`product_uuid: no product ${uuid} for this resource`);
      return product;
    },
  };
}

/**
 * The products of the resources' providers and which of them each resource
 * lists, in two queries: a resource that lists none offers every product of
 * its provider.
 */
async function productCatalogue(ctx: Context, resources: Resource[]) {
  const providerIds = [...new Set(resources.map((r) => r.provider.id))];
  const [products, listed] = await Promise.all([
    ctx.em.find(Product, { provider: { $in: providerIds } }, { orderBy: { name: 'asc' } }),
    ctx.em.execute<{ resource_id: string; product_id: string }[]>(
      `select resource_id, product_id from resource_product where resource_id in (${resources.map(() => '?').join(',')})`,
      resources.map((r) => r.id),
    ),
  ]);
  const byId = new Map(products.map((p) => [p.id, p]));
  return {
    byId,
    productsOf(resource: Resource): Product[] {
      const own = new Set(listed.filter((row) => row.resource_id === resource.id).map((row) => row.product_id));
      return products.filter((p) => (own.size ? own.has(p.id) : p.provider.id === resource.provider.id));
    },
  };
}

/** Booking-flow instants: with offset or Z as given, without offset in the provider's zone. */
export const instantOf = (value: string, resource: Resource, field: string): Date => parseDateTimeInput(value, resource.provider.timeZone, field);
