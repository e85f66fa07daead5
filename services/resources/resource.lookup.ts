import type { Context } from '../kernel/context.js';
import { requireCrm } from '../kernel/context.js';
import { notFound } from '../kernel/errors.js';
import type { Provider } from '../providers/provider.entity.js';
import { Resource } from './resource.entity.js';

/** A live (not deleted) resource of the provider by reference; 404 otherwise. */
export async function getResourceOf(ctx: Context, provider: Provider, reference: string): Promise<Resource> {
  const resource = await ctx.em.findOne(Resource, { crm: requireCrm(ctx), provider, reference, deletedAt: null });
  if (!resource) throw notFound('Resource', reference);
  return resource;
}
