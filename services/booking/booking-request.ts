import { z } from 'zod';
import type { Context } from '../kernel/context.js';
import { validationError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import { parseDateTimeInput } from '../kernel/wall-clock.js';
import { Product } from '../products/product.entity.js';
import { channelSettingsOf, effectiveChannel, parseChannelKey } from '../resources/booking-channel.service.js';
import type { Resource } from '../resources/resource.entity.js';
import type { ClaimRequest } from './place-claim.js';
import { resolvePublicResources, scopedTo } from './public-resource.js';

export const uuidField = (name: string) => z.string().trim().refine(isUuid, `must be a UUID (${name})`);

/**
 * What every booking-flow write needs: the resources the request may book,
 * the channel and its settings, the CRM-scoped context. Refuses archived
 * resources and channels that are not visible.
 */
export async function bookingScope(ctx: Context, ref: string, extraRefs: string[], channelKeyRaw: string | null | undefined) {
  const resources = await resolvePublicResources(ctx, ref, extraRefs);
  const main = resources[0];
  const scoped = scopedTo(ctx, main);
  const channelKey = parseChannelKey(channelKeyRaw);
  const settings = await channelSettingsOf(scoped, resources);
  const channelOf: ClaimRequest['channelOf'] = (resource: Resource) => {
    const rows = settings.get(resource.id)!;
    return { channel: effectiveChannel(rows, channelKey), rows };
  };
  const bookable = resources.filter((r) => !r.archived && channelOf(r).channel.visible);
  if (!bookable.length) throw validationError('this resource cannot be booked on this channel');
  return { main, scoped, channelKey, resources: bookable, channelOf };
}

/** A product of the resource's provider by UUID; unknown is a 400. */
export async function productByUuid(ctx: Context, resource: Resource, uuid: string | null | undefined): Promise<Product | null> {
  if (!uuid) return null;
  const product = await ctx.em.findOne(Product, { id: uuid, provider: resource.provider });
  if (!product) throw validationError(`product_uuid: no product ${uuid} for this resource`);
  return product;
}

/** Booking-flow instants: with offset or Z as given, without offset in the provider's zone. */
export const instantOf = (value: string, resource: Resource, field: string): Date => parseDateTimeInput(value, resource.provider.timeZone, field);
