import type { Context } from '../kernel/context.js';
import { requireCrm } from '../kernel/context.js';
import { notFound, validationError } from '../kernel/errors.js';
import type { Provider } from '../providers/provider.entity.js';
import { Product } from './product.entity.js';

/** A product of the provider by reference; 404 otherwise. */
export async function getProductOf(ctx: Context, provider: Provider, reference: string): Promise<Product> {
  const product = await ctx.em.findOne(Product, { crm: requireCrm(ctx), provider, reference });
  if (!product) throw notFound('Product', reference);
  return product;
}

/**
 * The provider's products with the given references (duplicates collapse), in
 * the order given. An unknown reference is bad input of the caller's list, so
 * it is a 400 naming `field` and every missing reference, not a 404.
 */
export async function getProductsOf(ctx: Context, provider: Provider, references: readonly string[], field = 'products'): Promise<Product[]> {
  const wanted = [...new Set(references)];
  if (wanted.length === 0) return [];
  const found = await ctx.em.find(Product, { crm: requireCrm(ctx), provider, reference: { $in: wanted } });
  const byReference = new Map(found.map((product) => [product.reference, product]));
  const missing = wanted.filter((reference) => !byReference.has(reference));
  if (missing.length > 0) {
    throw validationError(`${field}: no product of this provider with reference ${missing.join(', ')}`);
  }
  return wanted.map((reference) => byReference.get(reference)!);
}
