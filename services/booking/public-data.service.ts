import { Appointment } from '../appointments/appointment.entity.js';
import { ContactProfile } from '../contact-profiles/contact-profile.entity.js';
import { contactChannelFor } from '../contact-profiles/contact-profile.service.js';
import type { Context } from '../kernel/context.js';
import { DomainError, notFound, validationError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import type { Product } from '../products/product.entity.js';
import { channelOffersProduct, channelSettingsOf, effectiveChannel, isExclusiveProduct, parseChannelKey } from '../resources/booking-channel.service.js';
import type { Resource } from '../resources/resource.entity.js';
import { Timeslot } from '../timeslots/timeslot.entity.js';
import { productsOf } from './bookables.service.js';
import { resolvePublicResource, scopedTo, unlessNotFound } from './public-resource.js';

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
 * Resolves `ref` and `tslRefs` (at least one is required) to resources of one
 * CRM. The first of them (the first `ref`, else the first `tslRefs` entry)
 * must exist; further ones that name nothing are skipped.
 */
async function resolveTargets(ctx: Context, query: PublicQuery): Promise<Target[]> {
  if (!query.refs.length && !query.tslRefs.length) throw validationError('at least one of the query parameters ref or tslRefs is required');
  const lookups = [
    ...query.refs.map((ref) => () => resolvePublicResource(ctx, ref).then((resource): Target => ({ resource }))),
    ...query.tslRefs.map((tslRef) => () => resolveTslRef(ctx, tslRef)),
  ];
  const targets: Target[] = [];
  for (const [index, lookup] of lookups.entries()) {
    const target = index === 0 ? await lookup() : await unlessNotFound(lookup());
    if (target) targets.push(target);
  }
  const crmId = targets[0]!.resource.crm.id;
  return targets.filter((t) => t.resource.crm.id === crmId);
}

/** A timeslot or appointment by UUID or reference; a reference several CRMs use is refused. */
async function resolveTslRef(ctx: Context, tslRef: string): Promise<Target> {
  const populate = ['resource', 'resource.provider', 'resource.crm'] as const;
  const byId = isUuid(tslRef);
  const appointments = await ctx.em.find(Appointment, byId ? { id: tslRef } : { reference: tslRef }, { populate: [...populate, 'product'], limit: 2 });
  const timeslots = await ctx.em.find(Timeslot, byId ? { id: tslRef } : { reference: tslRef }, { populate, limit: 2 });
  const found = [...appointments.map((a) => ({ resource: a.resource, product: a.product })), ...timeslots.map((t) => ({ resource: t.resource }))].filter(
    (t) => !t.resource.deletedAt,
  );
  if (found.length > 1) throw new DomainError('NOT_FOUND', `tslRefs: ${tslRef} is ambiguous; use the UUID`);
  if (!found[0]) throw notFound('Timeslot or appointment', tslRef);
  return found[0];
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
