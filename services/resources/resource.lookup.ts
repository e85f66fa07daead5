import { LockMode } from '@mikro-orm/core';
import type { Context } from '../kernel/context.js';
import { requireCrm } from '../kernel/context.js';
import { notFound } from '../kernel/errors.js';
import type { Provider } from '../providers/provider.entity.js';
import { Resource } from './resource.entity.js';

/**
 * A live (not deleted) resource of the provider by reference; 404 otherwise.
 * `forUpdate` locks the row until the surrounding transaction ends (only inside `inTransaction`).
 */
export async function getResourceOf(ctx: Context, provider: Provider, reference: string, options: { forUpdate?: boolean } = {}): Promise<Resource> {
  const resource = await ctx.em.findOne(
    Resource,
    { crm: requireCrm(ctx), provider, reference, deletedAt: null },
    options.forUpdate ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : {},
  );
  if (!resource) throw notFound('Resource', reference);
  return resource;
}
