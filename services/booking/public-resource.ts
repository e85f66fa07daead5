import type { Context } from '../kernel/context.js';
import { DomainError, notFound } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import { Resource } from '../resources/resource.entity.js';

/**
 * Finds the resource a booking-flow path names: its UUID, the full reference
 * `resourceId@providerUuid@platform`, or the short `resourceId@platform`.
 * References are unique per CRM, so a short reference that several CRMs use
 * is refused with a hint to use the full form. Deleted resources do not exist.
 */
export async function resolvePublicResource(ctx: Context, ref: string): Promise<Resource> {
  const value = ref.trim();
  if (!value || value.length > 600) throw notFound('Resource', ref);
  const populate = ['provider', 'crm'] as const;
  if (isUuid(value)) {
    const byId = await ctx.em.findOne(Resource, { id: value, deletedAt: null }, { populate });
    if (byId) return byId;
  }
  const parts = value.split('@');
  if (parts.length === 3 && isUuid(parts[1]!)) {
    const resource = await ctx.em.findOne(Resource, { reference: `${parts[0]}@${parts[2]}`, provider: parts[1]!, deletedAt: null }, { populate });
    if (resource) return resource;
  }
  const candidates = await ctx.em.find(Resource, { reference: value, deletedAt: null }, { populate, limit: 2 });
  if (candidates.length > 1) {
    throw new DomainError('NOT_FOUND', `Resource reference ${value} is ambiguous; use the full form resourceId@providerUuid@platform`);
  }
  if (!candidates[0]) throw notFound('Resource', ref);
  return candidates[0];
}

/**
 * The path's resource followed by the further resources a request names
 * (`ref` query parameters), each once; resources of another CRM than the
 * first are left out, and so are extra refs that name no resource (the
 * path's resource must exist).
 */
export async function resolvePublicResources(ctx: Context, ref: string, extraRefs: readonly string[]): Promise<[Resource, ...Resource[]]> {
  const main = await resolvePublicResource(ctx, ref);
  const resources: [Resource, ...Resource[]] = [main];
  for (const extra of extraRefs) {
    const resource = await unlessNotFound(resolvePublicResource(ctx, extra));
    if (resource && resource.crm.id === main.crm.id && !resources.some((r) => r.id === resource.id)) resources.push(resource);
  }
  return resources;
}

/** The found value, or null when the lookup answered NOT_FOUND (an extra ref that names nothing is skipped). */
export async function unlessNotFound<T>(lookup: Promise<T>): Promise<T | null> {
  try {
    return await lookup;
  } catch (error) {
    if (error instanceof DomainError && error.code === 'NOT_FOUND') return null;
    throw error;
  }
}

/** The context a public request runs in once the resource (and so its CRM) is known. */
export const scopedTo = (ctx: Context, resource: Resource): Context => ({ ...ctx, crm: resource.crm });
