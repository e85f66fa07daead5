import type { Context } from '../kernel/context.js';
import { DomainError, notFound, validationError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import { limitPublic } from '../kernel/rate-limits.js';
import { sql } from '../kernel/sql.js';
import { channelOffersProduct, effectiveChannel, isExclusiveProduct, parseChannelKey } from '../resources/booking-channel.service.js';
import { ContactDirectory, type ContactRow, resolveResourceRows, resourceRowsById } from './bookables-query.js';
import { assertRefCount, CHANNELLED_COLUMNS, channelRowsOf, type ChannelledRow, OFFER_COLUMNS, type OfferedProductRow, type OfferRow, offeredProducts, PRODUCT_JSON } from './public-resource.js';

/**
 * active_products and public_data read plain rows, like the rest of the
 * booking flow: one query for the resources the refs name with everything
 * the answer shows; with `tslRefs`, one for the timeslots and appointments
 * they name and one for those resources. A booking page asks for
 * public_data on every visit.
 */

export interface PublicQuery {
  refs: string[];
  tslRefs: string[];
  channelKey?: string;
}

interface ProfileJson {
  id: string;
  user_id: string;
  general: boolean;
  name: string;
  channels: { type: string; value: string }[];
}

interface PageRow extends ChannelledRow {
  public_name: string;
  description: string | null;
  message_help_text: string | null;
  website: string | null;
  image_url: string | null;
  contact_id: string | null;
  contact_profile_id: string | null;
  provider_name: string;
  provider_description: string | null;
  theming_allowed: boolean;
  localisation_allowed: boolean;
  custom_fields_allowed: boolean;
  provider_email: string | null;
  provider_mobile: string | null;
  provider_phone: string | null;
  /** The resource's contact profile. */
  own_profile: ProfileJson | null;
  /** The general profile (of no provider) of the resource's contact user. */
  general_profile: ProfileJson | null;
  contact_user: { first_name: string | null; last_name: string | null; email: string | null; mobile: string | null; phone: string | null } | null;
}

const PROFILE_JSON = `json_build_object('id', cp.id, 'user_id', cp.user_id, 'general', cp.provider_id is null, 'name', cp.name, 'channels',
    (select coalesce(json_agg(json_build_object('type', cc.type, 'value', cc.value)), '[]') from contact_channel cc where cc.profile_id = cp.id))`;

const PAGE_COLUMNS = `${CHANNELLED_COLUMNS}, r.public_name, r.description, r.message_help_text, r.website, r.image_url, r.contact_id, r.contact_profile_id,
  p.name as provider_name, p.description as provider_description, p.theming_allowed, p.localisation_allowed, p.custom_fields_allowed,
  p.email as provider_email, p.mobile as provider_mobile, p.phone as provider_phone,
  (select ${PROFILE_JSON} from contact_profile cp where cp.id = r.contact_profile_id) as own_profile,
  (select ${PROFILE_JSON} from contact_profile cp where cp.user_id = r.contact_id and cp.provider_id is null limit 1) as general_profile,
  (select json_build_object('first_name', u.first_name, 'last_name', u.last_name, 'email', u.email, 'mobile', u.mobile, 'phone', u.phone)
     from app_user u where u.id = r.contact_id) as contact_user`;

interface Target<Row> {
  resource: Row;
  /** Set when a tslRef named an appointment: only its product applies (null: it has none). */
  product?: OfferedProductRow | null;
}

/**
 * Resolves `ref` and `tslRefs` (at least one is required, at most
 * PUBLIC_REFS_MAX further resources and PUBLIC_REFS_MAX timeslots) to
 * resources of one CRM, read with `columns`. The first of them (the first
 * `ref`, else the first `tslRefs` entry) must exist; further ones that name
 * nothing are skipped. Each list is resolved in one go, not one query per
 * entry.
 */
async function resolveTargets<Row extends ChannelledRow>(ctx: Context, query: PublicQuery, columns: string): Promise<Target<Row>[]> {
  if (!query.refs.length && !query.tslRefs.length) throw validationError('at least one of the query parameters ref or tslRefs is required');
  await limitPublic(ctx, 'listing', query.refs[0] ?? query.tslRefs[0]);
  assertRefCount('ref', query.refs.slice(1));
  assertRefCount('tslRefs', query.tslRefs);
  const targets: Target<Row>[] = query.refs.length
    ? (await resolveResourceRows<Row>(ctx, query.refs[0]!, query.refs.slice(1), columns)).map((resource) => ({ resource }))
    : [];
  const found = await resolveTslRefs(ctx, query.tslRefs);
  const known = new Map(targets.map((t) => [t.resource.id, t.resource]));
  const missing = [...new Set(found.flatMap((f) => (f instanceof Error || known.has(f.resourceId) ? [] : [f.resourceId])))];
  for (const row of await resourceRowsById<Row>(ctx, missing, columns)) known.set(row.id, row);
  found.forEach((target, index) => {
    const resource = target instanceof Error ? undefined : known.get(target.resourceId);
    if (target instanceof Error || !resource) {
      if (index === 0 && !targets.length) throw target instanceof Error ? target : notFound('Timeslot or appointment', query.tslRefs[0]);
      return;
    }
    targets.push(target.product === undefined ? { resource } : { resource, product: target.product });
  });
  const crmId = targets[0]!.resource.crm_id;
  return targets.filter((t) => t.resource.crm_id === crmId);
}

interface TslRow {
  id: string;
  reference: string | null;
  resource_id: string;
  appointment: boolean;
  product: OfferedProductRow | null;
}

/**
 * Timeslots or appointments (of resources not deleted) by UUID or reference,
 * in one query for the whole list; each entry yields its resource (and, for
 * an appointment, its product) or the NOT_FOUND error for it (a reference
 * several CRMs use is refused, as is one that names nothing).
 */
async function resolveTslRefs(ctx: Context, tslRefs: readonly string[]): Promise<({ resourceId: string; product?: OfferedProductRow | null } | DomainError)[]> {
  if (!tslRefs.length) return [];
  // PostgreSQL text cannot hold NUL: such an entry names nothing.
  const usable = tslRefs.filter((value) => value.length <= 600 && !value.includes('\u0000'));
  const ids = usable.filter(isUuid).map((value) => value.toLowerCase());
  const rows = usable.length
    ? await sql<TslRow>(ctx, `select a.id, a.reference, a.resource_id, true as appointment,
           (select ${PRODUCT_JSON('pr')} from product pr where pr.id = a.product_id) as product
         from appointment a join resource r on r.id = a.resource_id
        where (a.id = any(?::uuid[]) or a.reference = any(?::text[])) and r.deleted_at is null
       union all
       select t.id, t.reference, t.resource_id, false, null
         from timeslot t join resource r on r.id = t.resource_id
        where (t.id = any(?::uuid[]) or t.reference = any(?::text[])) and r.deleted_at is null`,
        [ids, usable, ids, usable],
      )
    : [];
  return tslRefs.map((tslRef) => {
    const found = rows.filter((row) => (isUuid(tslRef) ? row.id === tslRef.toLowerCase() : row.reference === tslRef));
    if (found.length > 1) return new DomainError('NOT_FOUND', `tslRefs: ${tslRef} is ambiguous; use the UUID`);
    const [row] = found;
    if (!row) return notFound('Timeslot or appointment', tslRef);
    return row.appointment ? { resourceId: row.resource_id, product: row.product } : { resourceId: row.resource_id };
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
  const targets = await resolveTargets<OfferRow>(ctx, query, OFFER_COLUMNS);
  const result = new Map<string, ActiveProductView>();
  for (const target of targets) {
    const rows = channelRowsOf(target.resource.id, target.resource.settings);
    const channel = effectiveChannel(rows, channelKey);
    if (!channel.visible || target.resource.archived) continue;
    const candidates = target.product !== undefined ? (target.product ? [target.product] : []) : offeredProducts(target.resource);
    for (const product of candidates) {
      if (!channelOffersProduct(rows, channel, product.id) || result.has(product.id)) continue;
      result.set(product.id, {
        uuid: product.id,
        name: product.name,
        description: product.description,
        minDuration: product.min,
        maxDuration: product.max,
        leadTimeMinutes: product.lead,
        followUpTimeMinutes: product.follow,
        exclusive: isExclusiveProduct(rows, product.id),
      });
    }
  }
  return [...result.values()];
}

/** What the booking page shows about the (first) named resource, its contact, provider and channel. */
export async function publicData(ctx: Context, query: PublicQuery) {
  const channelKey = parseChannelKey(query.channelKey);
  const [target] = await resolveTargets<PageRow>(ctx, query, PAGE_COLUMNS);
  const resource = target!.resource;
  const channel = effectiveChannel(channelRowsOf(resource.id, resource.settings), channelKey);
  return {
    contact: contactOf(resource),
    resource: {
      uuid: resource.id,
      name: resource.public_name,
      description: resource.description,
      contactChannelType: shownChannelType(resource),
      msgHelpText: resource.message_help_text,
      url: resource.website,
      imgUrl: resource.image_url,
    },
    provider: {
      name: resource.provider_name,
      description: resource.provider_description,
      isThemingAllowed: resource.theming_allowed,
      isLocalisationAllowed: resource.localisation_allowed,
      areCustomFieldsAllowed: resource.custom_fields_allowed,
    },
    channel: { bookingProcess: channel.bookingProcess },
  };
}

/** The type of the channel a consumer is shown (ContactDirectory's rule), from the profiles read with the resource. */
function shownChannelType(resource: PageRow): string | null {
  const rows: ContactRow[] = [resource.own_profile, resource.general_profile].flatMap((profile) =>
    profile ? profile.channels.map((c) => ({ profile_id: profile.id, user_id: profile.user_id, general: profile.general, type: c.type, value: c.value })) : [],
  );
  const subject = { contactProfileId: resource.contact_profile_id, contactId: resource.contact_id };
  return new ContactDirectory(rows, [subject]).channelOf(subject)?.type ?? null;
}

/**
 * The contact a consumer sees: the resource's contact profile, else the
 * contact user's general profile, else the contact user, else the provider.
 */
function contactOf(resource: PageRow) {
  const profile = resource.own_profile ?? (resource.contact_id ? resource.general_profile : null);
  if (profile) {
    const value = (type: string) => profile.channels.find((c) => c.type === type)?.value ?? null;
    return { name: profile.name, email: value('email'), mobile: value('mobile'), phone: value('phone') };
  }
  const user = resource.contact_user;
  if (user) {
    return { name: [user.first_name, user.last_name].filter(Boolean).join(' ') || null, email: user.email, mobile: user.mobile, phone: user.phone };
  }
  return { name: resource.provider_name, email: resource.provider_email, mobile: resource.provider_mobile, phone: resource.provider_phone };
}
