import { z } from 'zod';
import { BusyIndex, durationCandidates, type Period, productFitsSlot, type SlotProduct } from '../booking/bookability.js';
import type { BookableView } from '../booking/bookables.service.js';
import { ContactDirectory, loadContacts, resolveResourceRows } from '../booking/bookables-query.js';
import { compilePattern, DEFAULT_TIME_FORMAT } from '../booking/date-pattern.js';
import { channelRowsOf, OFFER_COLUMNS, type OfferRow, offeredProducts } from '../booking/public-resource.js';
import type { Context } from '../kernel/context.js';
import { validationError } from '../kernel/errors.js';
import { interner } from '../kernel/interner.js';
import { parseInput } from '../kernel/validation.js';
import { formatWithOffset, parseDateTimeInput, wallClockString } from '../kernel/wall-clock.js';
import type { BookingChannelSetting } from '../resources/booking-channel-setting.entity.js';
import { channelOffersProduct, type EffectiveChannel, effectiveChannel, parseChannelKey } from '../resources/booking-channel.service.js';
import {
  type CapacityEvent,
  type IsoInterval,
  readCapacityEvent,
  type SlotState,
  slotKey,
  slotsOfTimeslotEvent,
  type TimeslotCapacityEvent,
  windowOfTimeslotEvent,
} from './capacity-event.js';

/** Resources one subscription may watch. */
export const CAPACITY_FEED_REFS_MAX = 50;
/** Slots one timeslot change expands to per subscription; beyond that the subscriber gets one "refetch this period" event. */
export const EXPANDED_SLOTS_MAX = 500;

const feedInput = z.object({
  refs: z.array(z.string().trim().min(1).max(600)).min(1).max(CAPACITY_FEED_REFS_MAX),
  from: wallClockString().nullish(),
  to: wallClockString().nullish(),
  channelKey: z.string().nullish(),
  timeFormat: z.string().nullish(),
  languageTag: z.string().nullish(),
});

/**
 * One change as a live calendar receives it. `scope` `slot`: `bookable` is
 * the slot as `upcoming_bookables` now shows it (same fields and numbers;
 * capacity_left 0 means it is no longer bookable). `scope` `timeslot`: a
 * timeslot change covers too many slots to list; `bookable` is null and
 * [from, to) should be refetched.
 */
export interface CapacityChangeView {
  scope: 'slot' | 'timeslot';
  resource_uuid: string;
  /** UTC, ISO 8601: the slot, or the period to refetch. */
  from: string;
  to: string;
  bookable: BookableView | null;
}

/** A value for one key (a slot); a later version of the same key replaces an earlier one. */
export interface LiveItem<T> {
  key: string;
  version: number;
  value: T;
}

interface WatchedResource {
  /**
   * Everything below and the subscriber's time format, named by
   * signatureOf: subscriptions with equal signatures see equal views of a
   * change, so they share them (see viewsOf).
   */
  signature: string;
  resource: { id: string; publicName: string };
  zone: string;
  rows: BookingChannelSetting[];
  channel: EffectiveChannel;
  /** Products the resource offers on the channel, for the duration and lead/follow-up checks of Bookable slots. */
  offered: (SlotProduct & { name: string })[];
  /** The resource's contact channel, as the listing shows it for its slots. */
  contact: BookableView['contact_channel'];
  /** The subscriber's timeFormat in this resource's zone (resources of several providers may be watched together). */
  formatted: TimeFormatter;
}

/** How the subscriber wants formattedStart/formattedEnd, as upcoming_bookables' timeFormat and languageTag. */
type TimeFormatter = (date: Date) => string;

/**
 * Compiled timeFormat patterns shared by the subscriptions of a gateway: a
 * change reaches every subscriber, and those with the same pattern, zone and
 * language then share one formatter and its memory of formatted instants.
 */
const formatters = new Map<string, TimeFormatter>();
const FORMATTERS_MAX = 200;
const formatterKey = (pattern: string, zone: string, languageTag: string | null | undefined) => `${pattern}\u0000${zone}\u0000${languageTag ?? ''}`;
function sharedFormatter(pattern: string, zone: string, languageTag: string | null | undefined): TimeFormatter {
  const key = formatterKey(pattern, zone, languageTag);
  let formatter = formatters.get(key);
  if (!formatter) {
    formatter = compilePattern(pattern, zone, languageTag, 'timeFormat');
    if (formatters.size >= FORMATTERS_MAX) formatters.clear();
    formatters.set(key, formatter);
  }
  return formatter;
}

/** Short names of the signatures of watched resources (see WatchedResource and kernel/interner.ts). */
const signatureOf = interner('s');

interface FeedRow extends OfferRow {
  public_name: string;
  contact_id: string | null;
  contact_profile_id: string | null;
}

const FEED_COLUMNS = `${OFFER_COLUMNS}, r.public_name, r.contact_id, r.contact_profile_id`;

/** What one `capacityChanged` subscription watches; turns published events into the views it should see. */
export interface CapacityFeed {
  resourceIds: string[];
  viewsOf(payload: unknown, now: Date): LiveItem<CapacityChangeView>[];
}

/**
 * Resolves a subscription's arguments like `upcoming_bookables` does: refs
 * in any of the three forms (the first decides the CRM; others of another
 * CRM are ignored), the channel (default RESOURCE_PUBLIC) and the optional
 * window [from, to) of slot starts. Resources that are archived or whose
 * channel is invisible are watched but yield nothing. Channel settings and
 * products are read once, when the subscription starts.
 */
export async function openCapacityFeed(ctx: Context, raw: unknown): Promise<CapacityFeed> {
  const input = parseInput(feedInput, raw, 'arguments');
  // Plain rows in one query (plus one for contact channels): every visitor of a booking page opens a subscription.
  const resources = await resolveResourceRows<FeedRow>(ctx, input.refs[0]!, input.refs.slice(1), FEED_COLUMNS);
  const channelKey = parseChannelKey(input.channelKey);
  const zone = resources[0]!.time_zone;
  const from = input.from ? parseDateTimeInput(input.from, zone, 'from') : null;
  const to = input.to ? parseDateTimeInput(input.to, zone, 'to') : null;
  if (from && to && to <= from) throw validationError('to must be after from');
  const pattern = input.timeFormat ?? DEFAULT_TIME_FORMAT;
  // Compiled here first: a bad pattern is a 400 before anything is watched.
  sharedFormatter(pattern, zone, input.languageTag);
  const subjectOf = (resource: FeedRow) => ({ contactProfileId: resource.contact_profile_id, contactId: resource.contact_id });
  const contacts = new ContactDirectory([], []);
  await loadContacts(ctx, contacts, resources.map(subjectOf));
  const watched = new Map<string, WatchedResource>();
  for (const resource of resources) {
    const rows = channelRowsOf(resource.id, resource.settings);
    const channel = effectiveChannel(rows, channelKey);
    if (!channel.visible || resource.archived) continue;
    const offered = offeredProducts(resource)
      .filter((p) => channelOffersProduct(rows, channel, p.id))
      .map((p) => ({ id: p.id, name: p.name, minDuration: p.min, maxDuration: p.max, leadTimeMinutes: p.lead, followUpTimeMinutes: p.follow }));
    const contact = contacts.channelOf(subjectOf(resource));
    const facts = { resource: { id: resource.id, publicName: resource.public_name }, zone: resource.time_zone, rows, channel, offered, contact };
    const formatted = sharedFormatter(pattern, resource.time_zone, input.languageTag);
    watched.set(resource.id, { signature: signatureOf(`${JSON.stringify(facts)}\u0000${formatterKey(pattern, resource.time_zone, input.languageTag)}`), ...facts, formatted });
  }
  return {
    resourceIds: resources.map((r) => r.id),
    viewsOf: (payload, now) => viewsOf(watched, payload, { now, from, to }),
  };
}

/**
 * Work shared by every subscription of a gateway that sees the same published
 * payload (the Redis event target parses it once and hands the same object
 * to each): the parsed event, its expansion per window, and the views per
 * subscription signature and window. Keyed weakly by the payload, so it
 * lives only as long as the message is being delivered.
 */
interface ParsedPayload {
  event: CapacityEvent | undefined;
  expansions: Map<string, SlotState[] | null>;
  views: Map<string, LiveItem<CapacityChangeView>[]>;
}
const parsedPayloads = new WeakMap<object, ParsedPayload>();

function parsedOnce(payload: unknown): ParsedPayload {
  const parse = (): ParsedPayload => ({ event: readCapacityEvent(payload), expansions: new Map(), views: new Map() });
  if (!payload || typeof payload !== 'object') return parse();
  let parsed = parsedPayloads.get(payload);
  if (!parsed) {
    parsed = parse();
    parsedPayloads.set(payload, parsed);
  }
  return parsed;
}

function viewsOf(
  watched: Map<string, WatchedResource>,
  payload: unknown,
  window: { now: Date; from: Date | null; to: Date | null },
): LiveItem<CapacityChangeView>[] {
  const parsed = parsedOnce(payload);
  const event = parsed.event;
  const target = event && watched.get(event.resourceId);
  if (!event || !target) return [];
  // Subscriptions with the same signature and window get the same items (cut with the first one's "now", microseconds
  // apart): a change reaching thousands of live calendars is turned into views once per kind of subscriber, and
  // their identical views let them share one GraphQL execution (see shared-execution.ts).
  const windowKey = `${window.from?.getTime() ?? ''}|${window.to?.getTime() ?? ''}`;
  const viewsKey = `${target.signature}\u0000${windowKey}`;
  let views = parsed.views.get(viewsKey);
  if (!views) parsed.views.set(viewsKey, (views = eventViews(target, event, parsed, window, windowKey)));
  return views;
}

function eventViews(
  target: WatchedResource,
  event: CapacityEvent,
  parsed: ParsedPayload,
  window: { now: Date; from: Date | null; to: Date | null },
  windowKey: string,
): LiveItem<CapacityChangeView>[] {
  if (event.scope === 'slot') {
    const start = new Date(event.start);
    if (start <= window.now || (window.from && start < window.from) || (window.to && start >= window.to)) return [];
    const view = toView(target, event);
    return view ? [{ key: slotKey(event.resourceId, event.start, event.end), version: event.version, value: view }] : [];
  }
  // Subscriptions with the same window share one expansion.
  if (!parsed.expansions.has(windowKey)) parsed.expansions.set(windowKey, slotsOfTimeslotEvent(event, { ...window, limit: EXPANDED_SLOTS_MAX }));
  const slots = parsed.expansions.get(windowKey)!;
  if (slots === null) return refetchNotice(target, event, window);
  return slots.flatMap((slot) => {
    const view = toView(target, slot);
    return view ? [{ key: slotKey(slot.resourceId, slot.start, slot.end), version: event.version, value: view }] : [];
  });
}

/**
 * The view of a slot on the subscriber's channel, by upcoming_bookables'
 * rules (bookability.ts): a LotAppointment whose product the channel does
 * not offer, and a Bookable of a channel that offers no product, are never
 * listed (null). A Bookable is listed only while some such product also fits
 * with its lead and follow-up time (inside the timeslot, clear of the busy
 * periods); otherwise it shows 0 places.
 */
function toView(target: WatchedResource, slot: SlotState): CapacityChangeView | null {
  let productId = slot.productId;
  let capacityLeft = slot.capacityLeft;
  let products: BookableView['products'];
  if (slot.kind === 'models.LotAppointment') {
    if (productId && !channelOffersProduct(target.rows, target.channel, productId)) return null;
    const product = productId ? target.offered.find((p) => p.id === productId) : undefined;
    products = product ? [{ uuid: product.id, name: product.name }] : [];
  } else {
    const period = { startMs: Date.parse(slot.start), endMs: Date.parse(slot.end) };
    const sized = durationCandidates(target.offered, (period.endMs - period.startMs) / 60_000, false);
    if (!sized.length) return null;
    const room = slot.room && roomOf(slot.room);
    const fitting = room ? sized.filter((p) => productFitsSlot(p, period, room.timeslot, room.busy)) : sized;
    productId = fitting.length === 1 ? fitting[0]!.id : null;
    if (!fitting.length) capacityLeft = 0;
    products = fitting.map((p) => ({ uuid: p.id, name: p.name }));
  }
  const start = new Date(slot.start);
  const end = new Date(slot.end);
  return {
    scope: 'slot',
    resource_uuid: slot.resourceId,
    from: start.toISOString(),
    to: end.toISOString(),
    bookable: {
      start: formatWithOffset(start, target.zone),
      end: formatWithOffset(end, target.zone),
      formattedStart: target.formatted(start),
      formattedEnd: target.formatted(end),
      timeslot_uuid: slot.timeslotId,
      appointment_uuid: slot.appointmentId,
      product_uuid: productId,
      resource_uuid: slot.resourceId,
      product_name: products.find((p) => p.uuid === productId)?.name ?? null,
      resource_name: target.resource.publicName,
      contact_channel: target.contact,
      capacity: slot.capacity,
      capacity_left: capacityLeft,
      products,
      kind: slot.kind,
    },
  };
}

const toPeriod = (value: IsoInterval): Period => ({ startMs: Date.parse(value.start), endMs: Date.parse(value.end) });

/** The slots of one expansion share one `room` object: build its timeslot period and busy index once. */
const rooms = new WeakMap<NonNullable<SlotState['room']>, { timeslot: Period; busy: BusyIndex }>();
function roomOf(room: NonNullable<SlotState['room']>) {
  let converted = rooms.get(room);
  if (!converted) {
    converted = { timeslot: toPeriod(room.timeslot), busy: new BusyIndex(room.busy.map(toPeriod)) };
    rooms.set(room, converted);
  }
  return converted;
}

/** One event for a timeslot change too large to list slot by slot: the client refetches [start, end). */
function refetchNotice(target: WatchedResource, event: TimeslotCapacityEvent, window: { now: Date; from: Date | null; to: Date | null }): LiveItem<CapacityChangeView>[] {
  const period = windowOfTimeslotEvent(event, window);
  if (!period || !target.offered.length) return [];
  return [
    {
      key: `${event.resourceId}|timeslot|${event.timeslotId}`,
      version: event.version,
      value: { scope: 'timeslot', resource_uuid: event.resourceId, from: period.start.toISOString(), to: period.end.toISOString(), bookable: null },
    },
  ];
}
