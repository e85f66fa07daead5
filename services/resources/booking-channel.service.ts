import { z } from 'zod';
import { Customer } from '../customers/customer.entity.js';
import { type Context, inTransaction, requireCrm } from '../kernel/context.js';
import { validationError } from '../kernel/errors.js';
import { parseInput } from '../kernel/validation.js';
import { addTouchedResources } from '../outbox/outbox.service.js';
import { Product } from '../products/product.entity.js';
import { getProvider } from '../providers/provider.service.js';
import { BOOKING_PROCESSES, BookingChannelSetting, type BookingProcess, CHANNEL_KEYS, type ChannelKey } from './booking-channel-setting.entity.js';
import type { Resource } from './resource.entity.js';
import { getResourceOf } from './resource.lookup.js';

/** How a channel behaves for a resource (see `effectiveChannel` for channels without stored settings). */
export interface EffectiveChannel {
  channelKey: ChannelKey;
  visible: boolean;
  bookingProcess: BookingProcess;
  /** Product ids offered; null offers every product of the resource. */
  productIds: string[] | null;
  exclusiveProductIds: string[];
  acceptedCustomerIds: string[];
}

export const DEFAULT_CHANNEL: Omit<EffectiveChannel, 'channelKey'> = {
  visible: true,
  bookingProcess: 'IMMEDIATE',
  productIds: null,
  exclusiveProductIds: [],
  acceptedCustomerIds: [],
};

/** A channel key from a query parameter; absent means RESOURCE_PUBLIC, unknown is a 400. */
export function parseChannelKey(value: string | null | undefined, field = 'channelKey'): ChannelKey {
  if (value === undefined || value === null || value === '') return 'RESOURCE_PUBLIC';
  if (!(CHANNEL_KEYS as readonly string[]).includes(value)) throw validationError(`${field} must be one of ${CHANNEL_KEYS.join(', ')}`);
  return value as ChannelKey;
}

/** The settings of every channel of the resources, keyed by resource id. */
export async function channelSettingsOf(ctx: Context, resources: Resource[]): Promise<Map<string, BookingChannelSetting[]>> {
  const rows = resources.length ? await ctx.em.find(BookingChannelSetting, { resource: { $in: resources.map((r) => r.id) } }) : [];
  const byResource = new Map<string, BookingChannelSetting[]>(resources.map((r) => [r.id, []]));
  for (const row of rows) byResource.get(row.resource.id)?.push(row);
  return byResource;
}

/** RESOURCE_EXCLUSIVE without settings of its own: closed. */
const CLOSED_CHANNEL: Omit<EffectiveChannel, 'channelKey'> = { ...DEFAULT_CHANNEL, visible: false };

/**
 * One channel's effective settings from the stored rows of ALL channels of
 * the resource. A channel with a row of its own uses it. Without one,
 * RESOURCE_EXCLUSIVE is closed (not visible), and every other channel
 * inherits RESOURCE_PUBLIC's visibility, booking process and product filter,
 * so a consumer cannot get round the provider's rules by choosing another
 * `channelKey`. Exclusive products and accepted customers are never
 * inherited: they name what belongs to one channel alone. Without any row,
 * RESOURCE_PUBLIC is visible, IMMEDIATE, all products.
 */
export function effectiveChannel(rows: BookingChannelSetting[], channelKey: ChannelKey): EffectiveChannel {
  const row = rows.find((r) => r.channelKey === channelKey);
  if (!row) {
    if (channelKey === 'RESOURCE_EXCLUSIVE') return { channelKey, ...CLOSED_CHANNEL };
    const publicRow = rows.find((r) => r.channelKey === 'RESOURCE_PUBLIC');
    if (!publicRow) return { channelKey, ...DEFAULT_CHANNEL };
    return { channelKey, ...DEFAULT_CHANNEL, visible: publicRow.visible, bookingProcess: publicRow.bookingProcess, productIds: publicRow.productIds };
  }
  return {
    channelKey,
    visible: row.visible,
    bookingProcess: row.bookingProcess,
    productIds: row.productIds,
    exclusiveProductIds: row.exclusiveProductIds,
    acceptedCustomerIds: row.acceptedCustomerIds,
  };
}

/**
 * Whether a product is offered on a channel: it passes the channel's product
 * filter, and a product some channel of the resource marks exclusive is
 * offered only on the channels that mark it.
 */
export function channelOffersProduct(rows: BookingChannelSetting[], channel: EffectiveChannel, productId: string): boolean {
  if (channel.productIds && !channel.productIds.includes(productId)) return false;
  const exclusiveSomewhere = rows.some((row) => row.exclusiveProductIds.includes(productId));
  return !exclusiveSomewhere || channel.exclusiveProductIds.includes(productId);
}

/** True when some channel of the resource marks the product exclusive. */
export const isExclusiveProduct = (rows: BookingChannelSetting[], productId: string): boolean =>
  rows.some((row) => row.exclusiveProductIds.includes(productId));

export const channelInput = z.object({
  visible: z.boolean().optional(),
  bookingProcess: z.enum(BOOKING_PROCESSES).optional(),
  products: z.array(z.string().min(1)).nullable().optional(),
  exclusiveProducts: z.array(z.string().min(1)).optional(),
  acceptedCustomers: z.array(z.string().min(1)).optional(),
});

export interface ChannelView {
  channelKey: ChannelKey;
  visible: boolean;
  bookingProcess: BookingProcess;
  products: string[] | null;
  exclusiveProducts: string[];
  acceptedCustomers: string[];
}

/** Every channel of a resource with its effective settings (references, not ids). */
export async function listChannels(ctx: Context, providerReference: string, resourceReference: string): Promise<ChannelView[]> {
  const provider = await getProvider(ctx, providerReference);
  const resource = await getResourceOf(ctx, provider, resourceReference);
  const rows = (await channelSettingsOf(ctx, [resource])).get(resource.id)!;
  return Promise.all(CHANNEL_KEYS.map((key) => toChannelView(ctx, effectiveChannel(rows, key))));
}

/** Changes the supplied settings of one channel of a resource. */
export async function saveChannel(ctx: Context, providerReference: string, resourceReference: string, channelKeyRaw: string, raw: unknown): Promise<ChannelView> {
  const channelKey = parseChannelKey(channelKeyRaw, 'channelKey');
  const input = parseInput(channelInput, raw);
  const crm = requireCrm(ctx);
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const resource = await getResourceOf(tx, provider, resourceReference);
    const productIds = async (refs: string[], field: string) => {
      const products = await tx.em.find(Product, { crm, provider, reference: { $in: refs } });
      const missing = refs.filter((ref) => !products.some((p) => p.reference === ref));
      if (missing.length) throw validationError(`${field}: no product ${missing.join(', ')}`);
      return products.map((p) => p.id);
    };
    const rows = await tx.em.find(BookingChannelSetting, { resource });
    // A channel's first stored settings start from what it inherited until now, so a save changes only the fields
    // sent and keeps the provider's public rules; RESOURCE_EXCLUSIVE, closed until configured, opens with the defaults.
    const current = channelKey === 'RESOURCE_EXCLUSIVE' ? { ...DEFAULT_CHANNEL } : effectiveChannel(rows, channelKey);
    const row =
      rows.find((r) => r.channelKey === channelKey) ??
      tx.em.create(BookingChannelSetting, {
        resource,
        channelKey,
        visible: current.visible,
        bookingProcess: current.bookingProcess,
        productIds: current.productIds,
        exclusiveProductIds: current.exclusiveProductIds,
        acceptedCustomerIds: current.acceptedCustomerIds,
      });
    if (input.visible !== undefined) row.visible = input.visible;
    if (input.bookingProcess !== undefined) row.bookingProcess = input.bookingProcess;
    if (input.products !== undefined) row.productIds = input.products === null ? null : await productIds(input.products, 'products');
    if (input.exclusiveProducts !== undefined) row.exclusiveProductIds = await productIds(input.exclusiveProducts, 'exclusiveProducts');
    if (input.acceptedCustomers !== undefined) {
      const customers = await tx.em.find(Customer, { crm, provider, reference: { $in: input.acceptedCustomers }, erasedAt: null });
      const missing = input.acceptedCustomers.filter((ref) => !customers.some((c) => c.reference === ref));
      if (missing.length) throw validationError(`acceptedCustomers: no customer ${missing.join(', ')}`);
      row.acceptedCustomerIds = customers.map((c) => c.id);
    }
    await tx.em.flush();
    // What the listing offers on this and the inheriting channels changed: cached listings of the resource are stale.
    addTouchedResources(tx.em, [resource.id]);
    return toChannelView(tx, effectiveChannel(rows.includes(row) ? rows : [...rows, row], channelKey));
  });
}

async function toChannelView(ctx: Context, channel: EffectiveChannel): Promise<ChannelView> {
  const refs = async (ids: string[]) => (ids.length ? (await ctx.em.find(Product, { id: { $in: ids } })).map((p) => p.reference) : []);
  const customers = channel.acceptedCustomerIds.length ? await ctx.em.find(Customer, { id: { $in: channel.acceptedCustomerIds }, erasedAt: null }) : [];
  return {
    channelKey: channel.channelKey,
    visible: channel.visible,
    bookingProcess: channel.bookingProcess,
    products: channel.productIds === null ? null : await refs(channel.productIds),
    exclusiveProducts: await refs(channel.exclusiveProductIds),
    acceptedCustomers: customers.map((c) => c.reference),
  };
}
