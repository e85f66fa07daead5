import { Appointment } from '../appointments/appointment.entity.js';
import { ContactProfile } from '../contact-profiles/contact-profile.entity.js';
import { contactChannelFor } from '../contact-profiles/contact-profile.service.js';
import type { Context } from '../kernel/context.js';
import { DomainError, notFound, validationError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import { limitPublic } from '../kernel/rate-limits.js';
import type { Product } from '../products/product.entity.js';
import { channelOffersProduct, channelSettingsOf, effectiveChannel, isExclusiveProduct, parseChannelKey } from '../resources/booking-channel.service.js';
import type { Resource } from '../resources/resource.entity.js';
import { Timeslot } from '../timeslots/timeslot.entity.js';
import { productsOf } from './bookables.service.js';
import { assertRefCount, resolvePublicResources, scopedTo } from './public-resource.js';

export interface PublicQuery {
  refs: string[];
  tslRefs: string[];
  channelKey?: string;
}

interface Target {
  resource: Resource;
  /** Set when a tslRef named an appointment: only its product applies. */
  product?: Product | null;
}

/**
 * Resolves `ref` and `tslRefs` (at least one is required, at most
 * PUBLIC_REFS_MAX further resources and PUBLIC_REFS_MAX timeslots) to
 * resources of one CRM. The first of them (the first `ref`, else the first
 * `tslRefs` entry) must exist; further ones that name nothing are skipped.
 * Each list is resolved in one go, not one query per entry.
 */
async function resolveTargets(ctx: Context, query: PublicQuery): Promise<Target[]> {
  if (!query.refs.length && !query.tslRefs.length) throw validationError('at least one of the query parameters ref or tslRefs is required');
  await limitPublic(ctx, 'listing', query.refs[0] ?? query.tslRefs[0]);
  assertRefCount('ref', query.refs.slice(1));
  assertRefCount('tslRefs', query.tslRefs);
  const targets: Target[] = query.refs.length
    ? (await resolvePublicResources(ctx, query.refs[0]!, query.refs.slice(1))).map((resource) => ({ resource }))
    : [];
  const found = await resolveTslRefs(ctx, query.tslRefs);
  found.forEach((target, index) => {
    if (target instanceof Error) {
      if (index === 0 && !targets.length) throw target;
      return;
    }
    targets.push(target);
  });
  const crmId = targets[0]!.resource.crm.id;
  return targets.filter((t) => t.resource.crm.id === crmId);
}

/**
 * Timeslots or appointments by UUID or reference, in two queries for the
 * whole list; each entry yields its target or the NOT_FOUND error for it (a
 * reference several CRMs use is refused, as is one that names nothing).
 */
async function resolveTslRefs(ctx: Context, tslRefs: readonly string[]): Promise<(Target | DomainError)[]> {
  if (!tslRefs.length) return [];
  // PostgreSQL text cannot hold NUL: such an entry names nothing.
  const usable = tslRefs.filter((value) => value.length <= 600 && !value.includes('\u0000'));
  const ids = usable.filter(isUuid).map((value) => value.toLowerCase());
  const where = { $or: [{ id: { $in: ids } }, { reference: { $in: usable } }] };
  const populate = ['resource', 'resource.provider', 'resource.crm'] as const;
  const appointments = usable.length ? await ctx.em.find(Appointment, where, { populate: [...populate, 'product'] }) : [];
  const timeslots = usable.length ? await ctx.em.find(Timeslot, where, { populate }) : [];
  return tslRefs.map((tslRef) => {
    const names = (row: { id: string; reference: string | null }) => (isUuid(tslRef) ? row.id === tslRef.toLowerCase() : row.reference === tslRef);
    const found = [
      ...appointments.filter(names).map((a): Target => ({ resource: a.resource, product: a.product })),
      ...timeslots.filter(names).map((t): Target => ({ resource: t.resource })),
    ].filter((t) => !t.resource.deletedAt);
    if (found.length > 1) return new DomainError('NOT_FOUND', `tslRefs: ${tslRef} is ambiguous; use the UUID`);
    return found[0] ?? notFound('Timeslot or appointment', tslRef);
  });
}

export interface ActiveProductView {
  uuid: string;
  name: string;
  description: string | null;
  minDuration: number | null;
  maxDuration: number | null;
  leadTimeMinutes: number | null;
  followUpTimeMinutes: number | null;
  exclusive: boolean;
}

/** The products the named resources, timeslots and appointments offer on the channel. */
export async function activeProducts(ctx: Context, query: PublicQuery): Promise<ActiveProductView[]> {
  const channelKey = parseChannelKey(query.channelKey);
  const targets = await resolveTargets(ctx, query);
  const scoped = scopedTo(ctx, targets[0]!.resource);
  const settings = await channelSettingsOf(scoped, targets.map((t) => t.resource));
  const result = new Map<string, ActiveProductView>();
  for (const target of targets) {
    const rows = settings.get(target.resource.id)!;
    const channel = effectiveChannel(rows, channelKey);
    if (!channel.visible || target.resource.archived) continue;
    const candidates = target.product !== undefined ? (target.product ? [target.product] : []) : await productsOf(scoped, target.resource);
    for (const product of candidates) {
      if (!channelOffersProduct(rows, channel, product.id) || result.has(product.id)) continue;
      result.set(product.id, {
        uuid: product.id,
        name: product.name,
        description: product.description,
        minDuration: product.minDuration,
        maxDuration: product.maxDuration,
        leadTimeMinutes: product.leadTimeMinutes,
        followUpTimeMinutes: product.followUpTimeMinutes,
        exclusive: isExclusiveProduct(rows, product.id),
      });
    }
  }
  return [...result.values()];
}

/** What the booking page shows about the (first) named resource, its contact, provider and channel. */
export async function publicData(ctx: Context, query: PublicQuery) {
  const channelKey = parseChannelKey(query.channelKey);
  const [target] = await resolveTargets(ctx, query);
  const resource = target!.resource;
  const scoped = scopedTo(ctx, resource);
  await scoped.em.populate(resource, ['contact', 'contactProfile']);
  const rows = (await channelSettingsOf(scoped, [resource])).get(resource.id)!;
  const channel = effectiveChannel(rows, channelKey);
  const shown = await contactChannelFor(scoped, { contactProfile: resource.contactProfile, contact: resource.contact });
  const provider = resource.provider;
  return {
    contact: await contactOf(scoped, resource),
    resource: {
      uuid: resource.id,
      name: resource.publicName,
      description: resource.description,
      contactChannelType: shown?.type ?? null,
      msgHelpText: resource.messageHelpText,
      url: resource.website,
      imgUrl: resource.imageUrl,
    },
    provider: {
      name: provider.name,
      description: provider.description,
      isThemingAllowed: provider.themingAllowed,
      isLocalisationAllowed: provider.localisationAllowed,
      areCustomFieldsAllowed: provider.customFieldsAllowed,
    },
    channel: { bookingProcess: channel.bookingProcess },
  };
}

/**
 * The contact a consumer sees: the resource's contact profile, else the
 * contact user's general profile, else the contact user, else the provider.
 */
async function contactOf(ctx: Context, resource: Resource) {
  const user = resource.contact;
  const profile =
    resource.contactProfile ?? (user ? await ctx.em.findOne(ContactProfile, { user, provider: null }) : null);
  if (profile) {
    await ctx.em.populate(profile, ['channels']);
    const value = (type: string) => profile.channels.getItems().find((c) => c.type === type)?.value ?? null;
    return { name: profile.name, email: value('email'), mobile: value('mobile'), phone: value('phone') };
  }
  if (user) {
    return { name: [user.firstName, user.lastName].filter(Boolean).join(' ') || null, email: user.email, mobile: user.mobile, phone: user.phone };
  }
  const provider = resource.provider;
  return { name: provider.name, email: provider.email, mobile: provider.mobile, phone: provider.phone };
}
