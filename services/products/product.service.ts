import { z } from 'zod';
import { type Context, inTransaction, requireCrm } from '../kernel/context.js';
import { DomainError, validationError } from '../kernel/errors.js';
import { optionalText, parseInput, requiredText } from '../kernel/validation.js';
import { getProvider } from '../providers/provider.service.js';
import { Product } from './product.entity.js';
import { sql } from '../kernel/sql.js';

/** One year in minutes: bounds every duration so a typo cannot overflow the integer column. */
const MAX_MINUTES = 366 * 24 * 60;

const durationMinutes = () => z.number().int().positive().max(MAX_MINUTES);
const bufferMinutes = () => z.number().int().nonnegative().max(MAX_MINUTES);

export const productInput = z.object({
  reference: requiredText(),
  name: requiredText(),
  description: optionalText(20_000),
  minDuration: durationMinutes().nullish(),
  maxDuration: durationMinutes().nullish(),
  leadTimeMinutes: bufferMinutes().nullish(),
  followUpTimeMinutes: bufferMinutes().nullish(),
});
export type ProductInput = z.input<typeof productInput>;

const OPTIONAL_FIELDS = ['description', 'minDuration', 'maxDuration', 'leadTimeMinutes', 'followUpTimeMinutes'] as const;

/**
 * Creates a product of the provider, or updates the one with that reference
 * (`created: false`, REST 200). On update the name is replaced; an optional
 * field changes only when the body names it (null clears it).
 */
export async function saveProduct(ctx: Context, providerReference: string, raw: unknown): Promise<{ product: Product; created: boolean }> {
  const crm = requireCrm(ctx);
  const input = parseInput(productInput, raw);
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const existing = await tx.em.findOne(Product, { crm, reference: input.reference }, { populate: ['provider'] });
    if (existing && existing.provider.id !== provider.id) {
      throw new DomainError('CONFLICT', `Product reference ${input.reference} is already used by another provider`);
    }
    const product =
      existing ?? tx.em.create(Product, { crm, provider, reference: input.reference, name: input.name, createdAt: new Date() });
    product.name = input.name;
    for (const field of OPTIONAL_FIELDS) {
      if (input[field] !== undefined || !existing) (product[field] as unknown) = input[field] ?? null;
    }
    if (product.minDuration !== null && product.maxDuration !== null && product.minDuration > product.maxDuration) {
      throw validationError(`minDuration (${product.minDuration}) must not be greater than maxDuration (${product.maxDuration})`);
    }
    await tx.em.flush();
    return { product, created: !existing };
  });
}

/** The provider's products, oldest first (plain rows: the ORM's find cost the gateway about as much again as the query). */
export async function listProducts(ctx: Context, providerReference: string): Promise<ProductFacts[]> {
  const provider = await getProvider(ctx, providerReference);
  return sql<ProductFacts>(ctx, `select id, reference, name, description, min_duration as "minDuration", max_duration as "maxDuration",
        lead_time_minutes as "leadTimeMinutes", follow_up_time_minutes as "followUpTimeMinutes"
       from product where crm_id = ? and provider_id = ? order by created_at, reference`,
    [requireCrm(ctx).id, provider.id],
  );
}

/** What the view shows of a product, from an entity or a row of listProducts. */
export type ProductFacts = Pick<Product, 'id' | 'reference' | 'name' | 'description' | 'minDuration' | 'maxDuration' | 'leadTimeMinutes' | 'followUpTimeMinutes'>;

export interface ProductView {
  uuid: string;
  reference: string;
  name: string;
  description: string | null;
  minDuration: number | null;
  maxDuration: number | null;
  leadTimeMinutes: number | null;
  followUpTimeMinutes: number | null;
}

/** The product as REST and GraphQL show it; absent optional values are null. */
export const toProductView = (product: ProductFacts): ProductView => ({
  uuid: product.id,
  reference: product.reference,
  name: product.name,
  description: product.description,
  minDuration: product.minDuration,
  maxDuration: product.maxDuration,
  leadTimeMinutes: product.leadTimeMinutes,
  followUpTimeMinutes: product.followUpTimeMinutes,
});
