import type { Context } from '../kernel/context.js';
import { DomainError, notFound, validationError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import { Resource } from '../resources/resource.entity.js';
import { resolveListingResources } from './bookables-query.js';

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

/** Most further resources (`ref`) or timeslots (`tslRefs`) one booking-flow request may name. */
export const PUBLIC_REFS_MAX = 20;

/** A 400 naming the parameter when a request lists more than `max` entries of it. */
export function assertRefCount(parameter: 'ref' | 'tslRefs', values: readonly unknown[], max = PUBLIC_REFS_MAX): void {
  const what = parameter === 'ref' ? 'further resources' : 'timeslots or appointments';
  if (values.length > max) throw validationError(`${parameter}: at most ${max} ${what} per request, got ${values.length}`);
}

/**
 * The path's resource followed by the further resources a request names
 * (`ref` query parameters, at most `maxExtra`), each once; resources of
 * another CRM than the first are left out, and so are extra refs that name
 * no resource (the path's resource must exist). The further refs are
 * resolved together, in one query, however many there are.
 */
export async function resolvePublicResources(
  ctx: Context,
  ref: string,
  extraRefs: readonly string[],
  maxExtra = PUBLIC_REFS_MAX,
): Promise<[Resource, ...Resource[]]> {
  assertRefCount('ref', extraRefs, maxExtra);
  const main = await resolvePublicResource(ctx, ref);
  if (!extraRefs.length) return [main];
  const named = await resolveListingResources(ctx, main.id, extraRefs);
  const ids = named.slice(1).map((resource) => resource.id);
  if (!ids.length) return [main];
  const loaded = await ctx.em.find(Resource, { id: { $in: ids }, deletedAt: null }, { populate: ['provider', 'crm'] });
  const byId = new Map(loaded.map((resource) => [resource.id, resource]));
  return [main, ...ids.map((id) => byId.get(id)).filter((resource): resource is Resource => resource !== undefined)];
}

/** The context a public request runs in once the resource (and so its CRM) is known. */
export const scopedTo = (ctx: Context, resource: Resource): Context => ({ ...ctx, crm: resource.crm });
