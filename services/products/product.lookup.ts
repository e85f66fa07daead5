import type { Context } from '../kernel/context.js';
import { requireCrm } from '../kernel/context.js';
import { notFound } from '../kernel/errors.js';
import type { Provider } from '../providers/provider.entity.js';
import { Product } from './product.entity.js';

/** A product of the provider by reference; 404 otherwise. */
export async function getProductOf(ctx: Context, provider: Provider, reference: string): Promise<Product> {
  const product = await ctx.em.findOne(Product, { crm: requireCrm(ctx), provider, reference });
  if (!product) throw notFound('Product', reference);
  return product;
}
