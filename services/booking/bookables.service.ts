import type { Context } from '../kernel/context.js';
import type { CalendarVersions } from '../kernel/calendar-version.js';
import { validationError } from '../kernel/errors.js';
import { limitPublic } from '../kernel/rate-limits.js';
import { formatWithOffset, parseDateTimeInput } from '../kernel/wall-clock.js';
import { Product } from '../products/product.entity.js';
import { channelOffersProduct, effectiveChannel, parseChannelKey } from '../resources/booking-channel.service.js';
import type { Resource } from '../resources/resource.entity.js';
import { BusyIndex, durationCandidates, lotPlacesLeft, productsForSlot } from './bookability.js';
import { type CachedListing, ListingCache, type RenderedAnswer, servable, weakEtag } from './bookables-cache.js';
import {
  type AppointmentRow,
  type ListedProduct,
  type ListedResource,
  type ListingWindow,
  loadContacts,
  loadListingCalendar,
  loadListingScope,
  type NamedResource,
  resolveListingResources,
  type TimeslotRow,
} from './bookables-query.js';
import { compilePattern, DEFAULT_GROUP_FORMAT, DEFAULT_TIME_FORMAT } from './date-pattern.js';
import { assertRefCount as assertPublicRefCount, PUBLIC_REFS_MAX } from './public-resource.js';

/** How far ahead "upcoming" looks by default, and the longest window `from`/`to` may ask for. */
export const BOOKABLES_HORIZON_DAYS = 366;
/** Bookables one answer holds at most (the earliest ones). */
export const BOOKABLES_MAX = 5000;
/**
 * Further resources (`ref`) one request may merge. A guess at what a widget
 * needs (a team page lists a handful), low enough that one request's work
 * stays bounded.
 */
export const BOOKABLES_REFS_MAX = PUBLIC_REFS_MAX;
/** A cached answer is recomputed after this long at the latest (the window's end moves on; setup changes that are not capacity events show up). */
export const BOOKABLES_CACHE_MAX_AGE_MS = 60_000;

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

export type BookableKind = 'models.Bookable' | 'models.LotAppointment';

export interface BookableView {
  start: string;
  end: string;
  formattedStart: string;
  formattedEnd: string;
  timeslot_uuid: string | null;
  appointment_uuid: string | null;
  product_uuid: string | null;
  resource_uuid: string;
  product_name: string | null;
  resource_name: string;
  contact_channel: { type: string; value: string } | null;
  capacity: number;
  capacity_left: number;
  products: { uuid: string; name: string }[];
  kind: BookableKind;
}

export interface BookablesQuery {
  extraRefs: string[];
  groupFormat?: string;
  timeFormat?: string;
  languageTag?: string;
  channelKey?: string;
  prdRef?: string;
  /** Extension: first slot start to list (ISO 8601; without offset in the provider's zone). Default now. */
  from?: string;
  /** Extension: list slots starting before this. Default `from` + 366 days. */
  to?: string;
}

export interface BookablesResult {
  groups: [string, BookableView[]][];
  publicVisible: boolean;
}

/**
 * The slots a consumer can book now: slots cut from BOOKABLE timeslots that
 * have no appointment yet (kind Bookable), and appointments open for
 * bookings with places left (kind LotAppointment), decided by bookability.ts.
 * Past slots, archived resources, invisible channels, products the channel
 * does not offer and slots whose blocked period (lead and follow-up time
 * included) would not fit are left out. Capacity counts live holds; expired
 * holds are free again.
 */
export async function upcomingBookables(ctx: Context, ref: string, query: BookablesQuery): Promise<BookablesResult> {
  await limitPublic(ctx, 'listing', ref);
  assertRefCount(query.extraRefs);
  const named = await resolveListingResources(ctx, ref, query.extraRefs);
  return (await computeListing(ctx, named, query, ctx.clock.now().getTime())).result;
}

/**
 * `upcomingBookables` rendered by `render` (null: no body, 204), from the
 * gateway's cache when an answer computed under the same calendar versions
 * is still valid; `fresh` computes anew (the client sent Cache-Control:
 * no-cache). `renderer` names the rendering, so two renderings of one
 * request are two entries.
 */
export async function renderedUpcomingBookables(
  ctx: Context,
  ref: string,
  query: BookablesQuery,
  rendering: { renderer: string; render(result: BookablesResult): Buffer | null; fresh: boolean },
): Promise<RenderedAnswer & { cached: boolean }> {
  await limitPublic(ctx, 'listing', ref);
  assertRefCount(query.extraRefs);
  const cache = ctx.calendar ? cacheOf(ctx.calendar) : undefined;
  const key = cacheKey(rendering.renderer, ref, query);
  const nowMs = ctx.clock.now().getTime();
  if (cache && !rendering.fresh) {
    const entry = cache.candidate(key, nowMs);
    if (entry && (await ctx.calendar!.read(entry.resourceIds)) === entry.token) return { ...entry.answer, cached: true };
  }
  const named = await resolveListingResources(ctx, ref, query.extraRefs);
  const resourceIds = named.map((r) => r.id);
  // Read before anything the answer shows: a write that commits later moves the versions again.
  const token = (await ctx.calendar?.read(resourceIds)) ?? null;
  const compute = async (): Promise<CachedListing> => {
    const listing = await computeListing(ctx, named, query, nowMs);
    const body = rendering.render(listing.result);
    const answer = { body, etag: body ? weakEtag(body) : null };
    return { token: token ?? '', resourceIds, computedAtMs: nowMs, validUntilMs: listing.validUntilMs, answer };
  };
  if (!cache || token === null) return { ...(await compute()).answer, cached: false };
  let mine = rendering.fresh;
  const entry = rendering.fresh
    ? await compute()
    : await cache.shared(key, token, () => {
        mine = true;
        return compute();
      });
  cache.store(key, entry);
  // A computation this request joined began at another clock time: its answer serves only if it is valid now.
  if (!mine && !servable(entry, ctx.clock.now().getTime())) return { ...(await compute()).answer, cached: false };
  return { ...entry.answer, cached: !mine };
}

/** One cache per gateway (per calendar-versions client), so two apps in one process never share answers. */
const caches = new WeakMap<CalendarVersions, ListingCache>();
function cacheOf(calendar: CalendarVersions): ListingCache {
  let cache = caches.get(calendar);
  if (!cache) caches.set(calendar, (cache = new ListingCache()));
  return cache;
}

/** Every parameter that changes the answer; absent and default values are one key. */
function cacheKey(renderer: string, ref: string, query: BookablesQuery): string {
  return JSON.stringify([
    renderer,
    ref.trim(),
    query.extraRefs,
    query.groupFormat ?? DEFAULT_GROUP_FORMAT,
    query.timeFormat ?? DEFAULT_TIME_FORMAT,
    query.languageTag ?? null,
    parseChannelKeyLoose(query.channelKey),
    query.prdRef ?? null,
    query.from ?? null,
    query.to ?? null,
  ]);
}

const parseChannelKeyLoose = (value: string | undefined) => (value === undefined || value === '' ? 'RESOURCE_PUBLIC' : value);

function assertRefCount(extraRefs: readonly string[]): void {
  assertPublicRefCount('ref', extraRefs, BOOKABLES_REFS_MAX);
}

/**
 * The window of slot starts: [from, to), by default [now, now + 366 days).
 * A bad value, `to` not after `from`, or a window longer than 366 days is a
 * 400 naming the parameter.
 */
function windowOf(query: BookablesQuery, timeZone: string, nowMs: number): ListingWindow {
  const from = query.from === undefined ? null : parseDateTimeInput(query.from, timeZone, 'from').getTime();
  const to = query.to === undefined ? null : parseDateTimeInput(query.to, timeZone, 'to').getTime();
  const fromMs = from ?? nowMs;
  const toMs = to ?? fromMs + BOOKABLES_HORIZON_DAYS * DAY_MS;
  if (from !== null && to !== null && to <= from) throw validationError('to must be after from');
  if (toMs - fromMs > BOOKABLES_HORIZON_DAYS * DAY_MS) {
    throw validationError(`to must lie at most ${BOOKABLES_HORIZON_DAYS} days after ${from === null ? 'now' : 'from'}`);
  }
  return { nowMs, fromMs, toMs };
}

interface Entry {
  startMs: number;
  endMs: number;
  resource: ListedResource;
  view: Omit<BookableView, 'start' | 'end' | 'formattedStart' | 'formattedEnd'>;
}

/** Computes the answer and the instant it changes by time alone. */
async function computeListing(ctx: Context, named: NamedResource[], query: BookablesQuery, nowMs: number): Promise<{ result: BookablesResult; validUntilMs: number }> {
  const main = named[0]!;
  const channelKey = parseChannelKey(query.channelKey);
  // Each slot is formatted and grouped in its own provider's zone (resources of several providers may be listed
  // together); compiled once per zone, the main resource's first, so a bad pattern is a 400 before any work.
  const formats = new Map<string, SlotFormats>();
  const formatsOf = (timeZone: string): SlotFormats => {
    let compiled = formats.get(timeZone);
    if (!compiled) {
      compiled = {
        groupOf: compilePattern(query.groupFormat ?? DEFAULT_GROUP_FORMAT, timeZone, query.languageTag, 'groupFormat'),
        timeOf: compilePattern(query.timeFormat ?? DEFAULT_TIME_FORMAT, timeZone, query.languageTag, 'timeFormat'),
      };
      formats.set(timeZone, compiled);
    }
    return compiled;
  };
  formatsOf(main.timeZone);
  const window = windowOf(query, main.timeZone, nowMs);
  const [scope, calendar] = await Promise.all([
    loadListingScope(ctx, named, query.prdRef),
    loadListingCalendar(
      ctx,
      named.map((r) => r.id),
      window,
    ),
  ]);
  if (scope.product === undefined) throw validationError(`prdRef: no product ${query.prdRef} for this resource`);
  const product = scope.product;
  const channelOf = (resource: ListedResource) => effectiveChannel(scope.channelRows.get(resource.id)!, channelKey);
  const mainResource = scope.resources.get(main.id)!;
  const publicVisible = channelOf(mainResource).visible && !mainResource.closed;
  const open = named.map((r) => scope.resources.get(r.id)!).filter((r) => !r.closed && channelOf(r).visible);

  const timeslotsOf = groupBy(calendar.timeslots, (t) => t.resource_id);
  const appointmentsOf = groupBy(calendar.appointments, (a) => a.resource_id);
  const lowerMs = Math.max(window.nowMs, window.fromMs);
  const inWindow = (a: AppointmentRow) => a.start_ms >= lowerMs && a.start_ms < window.toMs;
  // Appointments with a contact of their own show its channel; load those the scope did not cover, in one query.
  await loadContacts(
    ctx,
    scope.contacts,
    calendar.appointments.filter((a) => a.contact_id && inWindow(a)).map((a) => ({ contactProfileId: a.contact_profile_id, contactId: a.contact_id })),
  );

  const entries: Entry[] = [];
  let validUntilMs = nowMs + BOOKABLES_CACHE_MAX_AGE_MS;
  for (const resource of open) {
    const rows = scope.channelRows.get(resource.id)!;
    const channel = channelOf(resource);
    const offered = scope.products.get(resource.id)!.filter((p) => channelOffersProduct(rows, channel, p.id));
    const contact = scope.contacts.channelOf({ contactProfileId: resource.contactProfileId, contactId: resource.contactId });
    const appointments = appointmentsOf.get(resource.id) ?? [];
    const active = appointments.filter((a) => a.state === 'ACTIVE' && !a.archived);
    const busy = new BusyIndex(active.map((a) => ({ startMs: a.blocked_from_ms, endMs: a.blocked_to_ms })));
    // Slots with an appointment of their own (any state: a cancelled one keeps its slot closed) are not Bookables.
    const ownStarts = new Map<string, Set<number>>();
    for (const a of appointments) {
      if (!a.timeslot_id) continue;
      if (!ownStarts.has(a.timeslot_id)) ownStarts.set(a.timeslot_id, new Set());
      ownStarts.get(a.timeslot_id)!.add(a.start_ms);
    }
    const shared = { resource_uuid: resource.id, resource_name: resource.publicName, contact_channel: contact };
    cutBookables(entries, resource, timeslotsOf.get(resource.id) ?? [], { window, offered, product, busy, ownStarts, shared });

    for (const a of appointments) {
      if (!inWindow(a)) continue;
      if (a.next_expiry_ms !== null) validUntilMs = Math.min(validUntilMs, a.next_expiry_ms);
      const left = lotPlacesLeft(
        {
          state: a.state,
          archived: a.archived,
          acceptBookings: a.accept_bookings,
          startMs: a.start_ms,
          capacity: a.capacity,
          timeslotState: a.timeslot_state,
          resourceOpen: true,
        },
        a.taken,
        nowMs,
      );
      if (left <= 0) continue;
      if (a.product_id && !channelOffersProduct(rows, channel, a.product_id)) continue;
      if (product && a.product_id !== product.id) continue;
      entries.push({
        startMs: a.start_ms,
        endMs: a.end_ms,
        resource,
        view: {
          timeslot_uuid: a.timeslot_id,
          appointment_uuid: a.id,
          product_uuid: a.product_id,
          resource_uuid: resource.id,
          product_name: a.product_name,
          resource_name: resource.publicName,
          contact_channel: a.contact_id ? scope.contacts.channelOf({ contactProfileId: a.contact_profile_id, contactId: a.contact_id }) : contact,
          capacity: a.capacity,
          capacity_left: left,
          products: a.product_id ? [{ uuid: a.product_id, name: a.product_real_name! }] : [],
          kind: 'models.LotAppointment',
        },
      });
    }
  }

  entries.sort((a, b) => a.startMs - b.startMs || (a.resource === b.resource ? 0 : a.resource.publicName.localeCompare(b.resource.publicName)));
  const listed = entries.length > BOOKABLES_MAX ? entries.slice(0, BOOKABLES_MAX) : entries;
  // The first listed slot stops being upcoming when it starts.
  if (listed.length) validUntilMs = Math.min(validUntilMs, listed[0]!.startMs);
  return { result: { groups: groupViews(listed, formatsOf), publicVisible }, validUntilMs };
}

/**
 * Cuts the timeslots of one resource (sorted by start) into Bookable entries
 * in one pass: each slot in the window without an appointment of its own,
 * with the offered products that fit it (bookability.ts). Stops once the
 * resource alone has more than an answer holds and later slots could not
 * make it into the answer.
 */
function cutBookables(
  entries: Entry[],
  resource: ListedResource,
  timeslots: TimeslotRow[],
  context: {
    window: ListingWindow;
    offered: ListedProduct[];
    product: ListedProduct | null;
    busy: BusyIndex;
    ownStarts: Map<string, Set<number>>;
    shared: Pick<BookableView, 'resource_uuid' | 'resource_name' | 'contact_channel'>;
  },
): void {
  const { window, offered, product, busy, ownStarts, shared } = context;
  const lowestStart = Math.max(window.nowMs + 1, window.fromMs);
  let count = 0;
  let latestStart = -Infinity;
  for (const timeslot of timeslots) {
    if (count >= BOOKABLES_MAX && timeslot.start_ms > latestStart) break;
    const step = timeslot.raster * MINUTE_MS;
    const sized = durationCandidates(offered, timeslot.raster, product !== null);
    if (!sized.length || (product && !sized.some((p) => p.id === product.id))) continue;
    const period = { startMs: timeslot.start_ms, endMs: timeslot.end_ms };
    const own = ownStarts.get(timeslot.id);
    const productLists = new Map<string, BookableView['products']>();
    let startMs = timeslot.start_ms + (lowestStart > timeslot.start_ms ? Math.ceil((lowestStart - timeslot.start_ms) / step) * step : 0);
    for (; startMs + step <= timeslot.end_ms && startMs < window.toMs; startMs += step) {
      if (count >= BOOKABLES_MAX && startMs > latestStart) break;
      if (own?.has(startMs)) continue;
      const fitting = productsForSlot(sized, { startMs, endMs: startMs + step }, period, busy);
      if (!fitting.length || (product && !fitting.some((p) => p.id === product.id))) continue;
      const chosen = product ?? (fitting.length === 1 ? fitting[0]! : null);
      const listKey = fitting.map((p) => p.id).join(',');
      let products = productLists.get(listKey);
      if (!products) productLists.set(listKey, (products = fitting.map((p) => ({ uuid: p.id, name: p.name }))));
      entries.push({
        startMs,
        endMs: startMs + step,
        resource,
        view: {
          timeslot_uuid: timeslot.id,
          appointment_uuid: null,
          product_uuid: chosen?.id ?? null,
          resource_uuid: shared.resource_uuid,
          product_name: chosen?.name ?? null,
          resource_name: shared.resource_name,
          contact_channel: shared.contact_channel,
          capacity: timeslot.default_capacity,
          capacity_left: timeslot.default_capacity,
          products,
          kind: 'models.Bookable',
        },
      });
      count++;
      latestStart = Math.max(latestStart, startMs);
    }
  }
}

/** `groupFormat` and `timeFormat` compiled for one zone. */
interface SlotFormats {
  groupOf: (date: Date) => string;
  timeOf: (date: Date) => string;
}

/** The views with their dates, grouped by the formatted start (each in its provider's zone), in order. */
function groupViews(entries: Entry[], formatsOf: (timeZone: string) => SlotFormats): [string, BookableView[]][] {
  const groups = new Map<string, BookableView[]>();
  for (const entry of entries) {
    const start = new Date(entry.startMs);
    const end = new Date(entry.endMs);
    const { view } = entry;
    const { groupOf, timeOf } = formatsOf(entry.resource.timeZone);
    const bookable: BookableView = {
      start: formatWithOffset(start, entry.resource.timeZone),
      end: formatWithOffset(end, entry.resource.timeZone),
      formattedStart: timeOf(start),
      formattedEnd: timeOf(end),
      timeslot_uuid: view.timeslot_uuid,
      appointment_uuid: view.appointment_uuid,
      product_uuid: view.product_uuid,
      resource_uuid: view.resource_uuid,
      product_name: view.product_name,
      resource_name: view.resource_name,
      contact_channel: view.contact_channel,
      capacity: view.capacity,
      capacity_left: view.capacity_left,
      products: view.products,
      kind: view.kind,
    };
    const key = groupOf(start);
    const group = groups.get(key);
    if (group) group.push(bookable);
    else groups.set(key, [bookable]);
  }
  return [...groups.entries()];
}

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/** Products a resource offers: those listed on it, or every product of its provider when none is listed. */
export async function productsOf(ctx: Context, resource: Resource): Promise<Product[]> {
  await ctx.em.populate(resource, ['products']);
  const listed = resource.products.getItems();
  if (listed.length) return [...listed].sort((a, b) => a.name.localeCompare(b.name));
  return ctx.em.find(Product, { provider: resource.provider }, { orderBy: { name: 'asc' } });
}
