import type { Context } from '../kernel/context.js';
import { sql } from '../kernel/sql.js';
import { DomainError, notFound } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import { BookingChannelSetting } from '../resources/booking-channel-setting.entity.js';
import { CUSTOMER_VISIBLE_CHANNEL_TYPES } from '../contact-profiles/contact-profile.service.js';
import { OCCUPYING_SQL, type SlotProduct } from './bookability.js';

/**
 * The reads of `upcoming_bookables`, as plain rows in few queries: which
 * resources the refs name (one query), what the listing shows of them
 * (names, channels, products, contact channels: one query plus the channel
 * settings), and the calendar of the window (timeslots, appointments with
 * their places taken: two queries). Instants come as epoch milliseconds.
 */

/** A resource a listing request names, as resolved before the calendar version is read. */
export interface NamedResource {
  id: string;
  crmId: string;
  providerId: string;
  timeZone: string;
}

/** What the listing shows of a resource, read after the calendar version (a change since resolving is seen). */
export interface ListedResource extends NamedResource {
  publicName: string;
  /** Archived or deleted since the refs were resolved. */
  closed: boolean;
  contactId: string | null;
  contactProfileId: string | null;
}

export interface ListedProduct extends SlotProduct {
  name: string;
}

export type ContactChannelView = { type: string; value: string } | null;

/** Who a consumer may contact about a resource or appointment (see contactChannelFor). */
export interface ContactSubject {
  contactProfileId: string | null;
  contactId: string | null;
}

export interface ListingScope {
  resources: Map<string, ListedResource>;
  channelRows: Map<string, BookingChannelSetting[]>;
  /** Products each resource offers on any channel: listed ones by name, else every product of its provider. */
  products: Map<string, ListedProduct[]>;
  /** The prdRef product, null when not asked for; undefined when unknown. */
  product: ListedProduct | null | undefined;
  /** Contact channels of the resources' subjects (see contactChannelOf). */
  contacts: ContactDirectory;
}

export interface TimeslotRow {
  id: string;
  resource_id: string;
  start_ms: number;
  end_ms: number;
  raster: number;
  default_capacity: number;
}

export interface AppointmentRow {
  id: string;
  resource_id: string;
  timeslot_id: string | null;
  product_id: string | null;
  /** The appointment's product name, else its product's. */
  product_name: string | null;
  /** The name of its product (for `products`). */
  product_real_name: string | null;
  start_ms: number;
  end_ms: number;
  blocked_from_ms: number;
  blocked_to_ms: number;
  capacity: number;
  accept_bookings: boolean;
  state: string;
  archived: boolean;
  contact_id: string | null;
  contact_profile_id: string | null;
  timeslot_state: string | null;
  /** Places taken now (REQUESTED, BOOKED, live holds); 0 for appointments before the window. */
  taken: number;
  /** When the earliest live hold of it expires; null without one. */
  next_expiry_ms: number | null;
}

/** Instants in the window a listing shows: slot starts in [from, to), always after now. */
export interface ListingWindow {
  nowMs: number;
  fromMs: number;
  toMs: number;
}

/** A literal `{a,b}` for `?::uuid[]`; the ids come from the database or were checked with isUuid. */
const uuidArray = (ids: readonly string[]): string => `{${ids.join(',')}}`;
const ms = (column: string) => `floor(extract(epoch from ${column}) * 1000)::float8`;

export interface ResolvedRow {
  id: string;
  crm_id: string;
  provider_id: string;
  reference: string;
  time_zone: string;
}

/**
 * Resolves the path's ref and the `ref` query parameters in one query, by
 * the rules of resolvePublicResource (UUID, full form
 * `resourceId@providerUuid@platform`, short form `resourceId@platform`; a
 * short form two CRMs use is ambiguous; deleted resources do not exist).
 * The first ref decides the CRM; resources of another CRM are left out,
 * repeated ones kept once.
 */
export async function resolveListingResources(ctx: Context, ref: string, extraRefs: readonly string[]): Promise<NamedResource[]> {
  const rows = await resolveResourceRows<ResolvedRow>(ctx, ref, extraRefs);
  return rows.map((row) => ({ id: row.id, crmId: row.crm_id, providerId: row.provider_id, timeZone: row.time_zone }));
}

/**
 * The rows of the resources the refs name (see resolveListingResources),
 * path resource first, from `resource r join provider p join
 * crm_integration c` with `columns` (e.g. `, r.public_name`) besides the
 * ones every caller needs. Outside a transaction the read is shared with
 * callers that ask the same while it waits for a connection (see sharedRead
 * in sql.ts): every booking and page of a busy calendar asks it first. The
 * rows may thus be another request's too: read them, do not change them.
 */
export async function resolveResourceRows<Row extends ResolvedRow>(ctx: Context, ref: string, extraRefs: readonly string[], columns = ''): Promise<Row[]> {
  const values = [ref, ...extraRefs].map((value) => (typeof value === 'string' ? value.trim() : ''));
  const ids = new Set<string>();
  const references = new Set<string>();
  const full: [string, string][] = [];
  for (const value of values) {
    // PostgreSQL text cannot hold NUL: such a ref names no resource (404 below), it must not reach the query.
    if (!value || value.length > 600 || value.includes('\u0000')) continue;
    if (isUuid(value)) ids.add(value.toLowerCase());
    references.add(value);
    const parts = value.split('@');
    if (parts.length === 3 && isUuid(parts[1]!)) full.push([`${parts[0]}@${parts[2]}`, parts[1]!.toLowerCase()]);
  }
  const rows = references.size
    ? await sql<Row>(ctx, `${resourceRowsSelect(columns)}
            and (r.id = any(?::uuid[]) or r.reference = any(?::text[])
                 ${full.map(() => 'or (r.reference = ? and r.provider_id = ?)').join(' ')})`,
        [uuidArray([...ids]), textArray([...references]), ...full.flat()],
        { shared: true },
      )
    : [];
  const resolved: Row[] = [];
  values.forEach((value, index) => {
    // Only the path resource must exist: an embedded calendar keeps working when one of its extra resources is deleted.
    const row = index === 0 ? pick(rows, value, ref) : pickExtra(rows, value, extraRefs[index - 1]!);
    if (!row) return;
    if (index === 0 || (row.crm_id === resolved[0]!.crm_id && !resolved.some((r) => r.id === row.id))) resolved.push(row);
  });
  return resolved;
}

/** The rows resolveResourceRows answers, of resources not deleted; the caller's conditions follow (`and …`). */
const resourceRowsSelect = (columns: string) => `select r.id, r.crm_id, r.provider_id, r.reference, p.time_zone${columns}
           from resource r join provider p on p.id = r.provider_id join crm_integration c on c.id = r.crm_id
          where r.deleted_at is null`;

/** The rows of resolveResourceRows for resources known by id (deleted ones left out), in no particular order. */
export async function resourceRowsById<Row extends ResolvedRow>(ctx: Context, ids: readonly string[], columns = ''): Promise<Row[]> {
  return ids.length ? sql<Row>(ctx, `${resourceRowsSelect(columns)} and r.id = any(?::uuid[])`, [uuidArray(ids)]) : [];
}

/** An extra `ref` as `pick` finds it, or null when it names no resource (unknown, deleted or ambiguous). */
function pickExtra<Row extends ResolvedRow>(rows: Row[], value: string, raw: string): Row | null {
  try {
    return pick(rows, value, raw);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'NOT_FOUND') return null;
    throw error;
  }
}

function pick<Row extends ResolvedRow>(rows: Row[], value: string, raw: string): Row {
  if (!value || value.length > 600) throw notFound('Resource', raw);
  if (isUuid(value)) {
    const byId = rows.find((row) => row.id === value.toLowerCase());
    if (byId) return byId;
  }
  const parts = value.split('@');
  if (parts.length === 3 && isUuid(parts[1]!)) {
    const reference = `${parts[0]}@${parts[2]}`;
    const byFull = rows.find((row) => row.reference === reference && row.provider_id === parts[1]!.toLowerCase());
    if (byFull) return byFull;
  }
  const candidates = rows.filter((row) => row.reference === value);
  if (candidates.length > 1) {
    throw new DomainError('NOT_FOUND', `Resource reference ${value} is ambiguous; use the full form resourceId@providerUuid@platform`);
  }
  if (!candidates[0]) throw notFound('Resource', raw);
  return candidates[0];
}

/** A literal for `?::text[]`: every element quoted, quotes and backslashes escaped. */
function textArray(values: readonly string[]): string {
  return `{${values.map((value) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}

interface ScopeRow {
  resources: { id: string; public_name: string; closed: boolean; contact_id: string | null; contact_profile_id: string | null }[];
  products: { resource_id: string; listed: boolean; id: string; name: string; min: number | null; max: number | null; lead: number | null; follow: number | null }[];
  product: { id: string; name: string; min: number | null; max: number | null; lead: number | null; follow: number | null } | null;
  contacts: ContactRow[];
}

/** A customer-visible channel of a contact profile, as ContactDirectory reads it. */
export interface ContactRow {
  profile_id: string;
  user_id: string;
  general: boolean;
  type: string;
  value: string;
}

/** The `json_build_object` arguments of a product as the booking flow reads it (id, name, durations, lead and follow-up time) for product `alias`. */
export const PRODUCT_FIELDS = (alias: string) =>
  `'id', ${alias}.id, 'name', ${alias}.name, 'min', ${alias}.min_duration, 'max', ${alias}.max_duration, 'lead', ${alias}.lead_time_minutes, 'follow', ${alias}.follow_up_time_minutes`;

const CONTACT_CHANNELS_SQL = (profiles: string, users: string) => `
  select coalesce(json_agg(json_build_object('profile_id', cp.id, 'user_id', cp.user_id, 'general', cp.provider_id is null, 'type', cc.type, 'value', cc.value)), '[]')
    from contact_profile cp join contact_channel cc on cc.profile_id = cp.id
   where cc.type in (${CUSTOMER_VISIBLE_CHANNEL_TYPES.map((type) => `'${type}'`).join(', ')})
     and (cp.id in (${profiles}) or (cp.provider_id is null and cp.user_id in (${users})))`;

/**
 * What the listing shows of the resources, in one query (names, archived,
 * products, the prdRef product, contact channels) plus one for the channel
 * settings, both after the calendar version was read.
 */
export async function loadListingScope(ctx: Context, named: NamedResource[], prdRef: string | undefined): Promise<ListingScope> {
  const ids = uuidArray(named.map((r) => r.id));
  // A prdRef with NUL (which PostgreSQL text cannot hold) names no product.
  const productKnowable = prdRef !== undefined && !prdRef.includes('\u0000');
  const productWhere = !productKnowable ? 'false' : isUuid(prdRef) ? 'pr.id = ?::uuid' : 'pr.reference = ?';
  const [[row], settings] = await Promise.all([
    sql<ScopeRow>(ctx, `select
        (select coalesce(json_agg(json_build_object('id', r.id, 'public_name', r.public_name, 'closed', r.archived or r.deleted_at is not null,
                  'contact_id', r.contact_id, 'contact_profile_id', r.contact_profile_id)), '[]')
           from resource r where r.id = any(?::uuid[])) as resources,
        (select coalesce(json_agg(json_build_object('resource_id', x.resource_id, 'listed', x.listed, ${PRODUCT_FIELDS('pr')}) order by pr.name), '[]')
           from (select rp.resource_id, rp.product_id, true as listed from resource_product rp where rp.resource_id = any(?::uuid[])
                 union all
                 select r.id, p.id, false from resource r join product p on p.provider_id = r.provider_id
                  where r.id = any(?::uuid[]) and not exists (select 1 from resource_product rp where rp.resource_id = r.id)) x
           join product pr on pr.id = x.product_id) as products,
        (select json_build_object(${PRODUCT_FIELDS('pr')}) from product pr where pr.provider_id = ? and ${productWhere} limit 1) as product,
        (${CONTACT_CHANNELS_SQL('select contact_profile_id from resource where id = any(?::uuid[])', 'select contact_id from resource where id = any(?::uuid[])')}) as contacts`,
      [ids, ids, ids, named[0]!.providerId, ...(productKnowable ? [prdRef] : []), ids, ids],
    ),
    ctx.em.find(BookingChannelSetting, { resource: { $in: named.map((r) => r.id) } }),
  ]);
  const resources = new Map<string, ListedResource>();
  for (const resource of named) {
    const found = row!.resources.find((r) => r.id === resource.id);
    resources.set(resource.id, {
      ...resource,
      publicName: found?.public_name ?? '',
      closed: !found || found.closed,
      contactId: found?.contact_id ?? null,
      contactProfileId: found?.contact_profile_id ?? null,
    });
  }
  const channelRows = new Map<string, BookingChannelSetting[]>(named.map((r) => [r.id, []]));
  for (const setting of settings) channelRows.get(setting.resource.id)?.push(setting);
  const products = new Map<string, ListedProduct[]>(named.map((r) => [r.id, []]));
  for (const p of row!.products) products.get(p.resource_id)?.push(listedProduct(p));
  // Listed products in the order productsOf gives them (by name, as JavaScript compares); the provider's come in the database's order.
  for (const resource of named) {
    const listed = row!.products.filter((p) => p.resource_id === resource.id && p.listed);
    if (listed.length) products.set(resource.id, listed.map(listedProduct).sort((a, b) => a.name.localeCompare(b.name)));
  }
  return {
    resources,
    channelRows,
    products,
    product: prdRef === undefined ? null : row!.product ? listedProduct(row!.product) : undefined,
    contacts: new ContactDirectory(
      row!.contacts,
      row!.resources.map((r) => ({ contactProfileId: r.contact_profile_id, contactId: r.contact_id })),
    ),
  };
}

const listedProduct = (p: ScopeRow['products'][number] | NonNullable<ScopeRow['product']>): ListedProduct => ({
  id: p.id,
  name: p.name,
  minDuration: p.min,
  maxDuration: p.max,
  leadTimeMinutes: p.lead,
  followUpTimeMinutes: p.follow,
});

/**
 * Contact channels by profile and by user's general profile, answering
 * contactChannelFor's rule without a query per subject: the first of mobile,
 * phone, email of the subject's profile; else the same of its contact's
 * general profile; else null.
 */
export class ContactDirectory {
  private readonly byProfile = new Map<string, ContactRow[]>();
  private readonly generalOf = new Map<string, string>();
  private readonly answers = new Map<string, ContactChannelView>();
  /** Profiles and users whose channels were asked for (a profile without visible channels has no rows). */
  private readonly askedProfiles = new Set<string>();
  private readonly askedUsers = new Set<string>();

  constructor(rows: ContactRow[], asked: ContactSubject[]) {
    this.add(rows, asked);
  }

  add(rows: ContactRow[], asked: ContactSubject[]): void {
    for (const row of rows) {
      if (!this.byProfile.has(row.profile_id)) this.byProfile.set(row.profile_id, []);
      this.byProfile.get(row.profile_id)!.push(row);
      if (row.general) this.generalOf.set(row.user_id, row.profile_id);
    }
    for (const subject of asked) {
      if (subject.contactProfileId) this.askedProfiles.add(subject.contactProfileId);
      if (subject.contactId) this.askedUsers.add(subject.contactId);
    }
  }

  /** Whether the channels of the subject's profile and contact were loaded. */
  knows(subject: ContactSubject): boolean {
    return (!subject.contactProfileId || this.askedProfiles.has(subject.contactProfileId)) && (!subject.contactId || this.askedUsers.has(subject.contactId));
  }

  /** The channel shown for a subject; the same object for equal answers, so a listing serializes shared values. */
  channelOf(subject: ContactSubject): ContactChannelView {
    const key = `${subject.contactProfileId ?? ''}|${subject.contactId ?? ''}`;
    if (this.answers.has(key)) return this.answers.get(key)!;
    const fromProfile = subject.contactProfileId ? this.firstVisible(subject.contactProfileId) : null;
    const general = subject.contactId ? this.generalOf.get(subject.contactId) : undefined;
    const answer = fromProfile ?? (general ? this.firstVisible(general) : null);
    this.answers.set(key, answer);
    return answer;
  }

  private firstVisible(profileId: string): ContactChannelView {
    const channels = this.byProfile.get(profileId) ?? [];
    for (const type of CUSTOMER_VISIBLE_CHANNEL_TYPES) {
      const channel = channels.find((candidate) => candidate.type === type);
      if (channel) return { type: channel.type, value: channel.value };
    }
    return null;
  }
}

/** The contact channel a consumer sees for one subject (ContactDirectory's rule), in one query. */
export async function contactChannelOf(ctx: Context, subject: ContactSubject): Promise<ContactChannelView> {
  const directory = new ContactDirectory([], []);
  await loadContacts(ctx, directory, [subject]);
  return directory.channelOf(subject);
}

/** Loads the contact channels of subjects the scope did not cover (appointments with a contact of their own). */
export async function loadContacts(ctx: Context, directory: ContactDirectory, subjects: ContactSubject[]): Promise<void> {
  subjects = subjects.filter((subject) => !directory.knows(subject));
  const profiles = [...new Set(subjects.map((s) => s.contactProfileId).filter((id): id is string => id !== null))];
  const users = [...new Set(subjects.map((s) => s.contactId).filter((id): id is string => id !== null))];
  if (!profiles.length && !users.length) return;
  const [row] = await sql<{ contacts: ContactRow[] }>(ctx, `select (${CONTACT_CHANNELS_SQL('select unnest(?::uuid[])', 'select unnest(?::uuid[])')}) as contacts`,
    [uuidArray(profiles), uuidArray(users)],
  );
  directory.add(row!.contacts, subjects);
}

const APPOINTMENT_COLUMNS = `a.id, a.resource_id, a.timeslot_id, a.product_id, a.product_name, a.start, a."end", a.blocked_from, a.blocked_to,
  a.capacity, a.accept_bookings, a.state, a.archived, a.contact_id, a.contact_profile_id`;

const TIMESLOTS_WHERE = `resource_id = any(?::uuid[]) and state = 'BOOKABLE' and "end" > ? and start < ?`;

/**
 * The calendar of the window in two queries: BOOKABLE timeslots with slots
 * that may start in it, and the appointments that matter for it: every
 * appointment starting in the window (listed ones, and the ones whose slot
 * stays closed) and every active appointment whose blocked period reaches
 * into one of those timeslots (busy periods), with places taken now.
 */
export async function loadListingCalendar(
  ctx: Context,
  resourceIds: string[],
  window: ListingWindow,
): Promise<{ timeslots: TimeslotRow[]; appointments: AppointmentRow[] }> {
  if (!resourceIds.length) return { timeslots: [], appointments: [] };
  const ids = uuidArray(resourceIds);
  const lower = new Date(Math.max(window.nowMs, window.fromMs));
  const upper = new Date(window.toMs);
  const now = new Date(window.nowMs);
  const [timeslots, appointments] = await Promise.all([
    sql<TimeslotRow>(ctx, `select id, resource_id, ${ms('start')} as start_ms, ${ms('"end"')} as end_ms, raster, default_capacity
         from timeslot where ${TIMESLOTS_WHERE} order by start`,
      [ids, lower, upper],
    ),
    sql<AppointmentRow>(ctx, `with reach as (select min(start) as low, max("end") as high from timeslot where ${TIMESLOTS_WHERE}),
       found as (
         select ${APPOINTMENT_COLUMNS} from appointment a where a.resource_id = any(?::uuid[]) and a.start >= ? and a.start < ?
         union all
         -- Busy periods reaching into the timeslots (the gist index on active blocked periods), those not found above.
         select ${APPOINTMENT_COLUMNS} from reach cross join unnest(?::uuid[]) as r(id)
           join appointment a on a.resource_id = r.id and a.state = 'ACTIVE' and not a.archived
            and tstzrange(a.blocked_from, a.blocked_to) && tstzrange(reach.low, reach.high)
          where reach.low is not null and not (a.start >= ? and a.start < ?)
       )
       select a.id, a.resource_id, a.timeslot_id, a.product_id, coalesce(a.product_name, pr.name) as product_name, pr.name as product_real_name,
              ${ms('a.start')} as start_ms, ${ms('a."end"')} as end_ms, ${ms('a.blocked_from')} as blocked_from_ms, ${ms('a.blocked_to')} as blocked_to_ms,
              a.capacity, a.accept_bookings, a.state, a.archived, a.contact_id, a.contact_profile_id, t.state as timeslot_state,
              coalesce(o.taken, 0) as taken, ${ms('o.next_expiry')} as next_expiry_ms
         from found a
         left join product pr on pr.id = a.product_id
         left join timeslot t on t.id = a.timeslot_id
         left join lateral (
           select count(*)::int as taken, min(p.expires_at) filter (where p.state = 'RESERVED') as next_expiry
             from participation p where p.appointment_id = a.id and a.start >= ? and ${OCCUPYING_SQL}
         ) o on true
        order by a.start`,
      [ids, lower, upper, ids, lower, upper, ids, lower, upper, lower, now],
    ),
  ]);
  return { timeslots, appointments };
}
