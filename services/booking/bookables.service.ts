import { Appointment } from '../appointments/appointment.entity.js';
import { contactChannelFor } from '../contact-profiles/contact-profile.service.js';
import type { Context } from '../kernel/context.js';
import { validationError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import { formatWithOffset } from '../kernel/wall-clock.js';
import { Product } from '../products/product.entity.js';
import { channelOffersProduct, channelSettingsOf, effectiveChannel, parseChannelKey } from '../resources/booking-channel.service.js';
import type { Resource } from '../resources/resource.entity.js';
import { cutSlots, type Interval, keepsLeadAndFollowUp } from '../timeslots/slot-grid.js';
import { Timeslot } from '../timeslots/timeslot.entity.js';
import { compilePattern, DEFAULT_GROUP_FORMAT, DEFAULT_TIME_FORMAT } from './date-pattern.js';
import { occupancyOf } from '../appointments/occupancy.js';
import { resolvePublicResources, scopedTo } from './public-resource.js';

/** How far ahead "upcoming" looks, and how many bookables one answer holds at most. */
export const BOOKABLES_HORIZON_DAYS = 366;
export const BOOKABLES_MAX = 5000;

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
}

export interface BookablesResult {
  groups: [string, BookableView[]][];
  publicVisible: boolean;
}

/**
 * The slots a consumer can book now: slots cut from BOOKABLE timeslots that
 * have no appointment yet (kind Bookable), and appointments open for
 * bookings with places left (kind LotAppointment). Past slots, archived
 * resources, invisible channels, products the channel does not offer and
 * slots that would not leave the product's lead and follow-up time free are
 * left out. Capacity counts live holds; expired holds are free again.
 */
export async function upcomingBookables(ctx: Context, ref: string, query: BookablesQuery): Promise<BookablesResult> {
  const resources = await resolvePublicResources(ctx, ref, query.extraRefs);
  const main = resources[0];
  const scoped = scopedTo(ctx, main);
  const channelKey = parseChannelKey(query.channelKey);
  const zone = main.provider.timeZone;
  const groupOf = compilePattern(query.groupFormat ?? DEFAULT_GROUP_FORMAT, zone, query.languageTag, 'groupFormat');
  const timeOf = compilePattern(query.timeFormat ?? DEFAULT_TIME_FORMAT, zone, query.languageTag, 'timeFormat');
  const settings = await channelSettingsOf(scoped, resources);
  const channelOf = (resource: Resource) => effectiveChannel(settings.get(resource.id)!, channelKey);
  const publicVisible = channelOf(main).visible && !main.archived;
  const open = resources.filter((r) => !r.archived && channelOf(r).visible);
  const product = query.prdRef ? await findProduct(scoped, main, query.prdRef) : null;

  const now = ctx.clock.now();
  const horizon = new Date(now.getTime() + BOOKABLES_HORIZON_DAYS * 86_400_000);
  const found = open.length ? await loadCalendar(scoped, open, now, horizon) : { timeslots: [], appointments: [], closed: [] };
  const occupancy = await occupancyOf(scoped, found.appointments.map((a) => a.id));
  const entries: { resource: Resource; view: Omit<BookableView, 'formattedStart' | 'formattedEnd' | 'start' | 'end'>; slot: Interval }[] = [];
  const contactCache = new Map<string, BookableView['contact_channel']>();
  const contactOf = async (key: string, subject: Parameters<typeof contactChannelFor>[1]) => {
    if (!contactCache.has(key)) contactCache.set(key, await contactChannelFor(scoped, subject));
    return contactCache.get(key)!;
  };

  for (const resource of open) {
    const rows = settings.get(resource.id)!;
    const channel = channelOf(resource);
    const offered = (await productsOf(scoped, resource)).filter((p) => channelOffersProduct(rows, channel, p.id));
    const busy = found.appointments.filter((a) => a.resource.id === resource.id);
    const contact = await contactOf(`r:${resource.id}`, { contactProfile: resource.contactProfile, contact: resource.contact });

    for (const timeslot of found.timeslots.filter((t) => t.resource.id === resource.id)) {
      const taken = new Set([...busy, ...found.closed].filter((a) => a.timeslot?.id === timeslot.id).map((a) => a.start.getTime()));
      const minutes = timeslot.raster;
      const sized = offered.filter((p) => fitsRaster(p, minutes));
      for (const slot of cutSlots(timeslot, { from: now, limit: BOOKABLES_MAX })) {
        if (slot.start <= now || taken.has(slot.start.getTime())) continue;
        if (busy.some((a) => a.start < slot.end && a.end > slot.start)) continue;
        // Every product, not only prdRef's, must keep its lead and follow-up time free: reserve refuses a slot that does not.
        const fitting = sized.filter((p) => keepsLeadAndFollowUp(slot, p.leadTimeMinutes, p.followUpTimeMinutes, busy, timeslot));
        if (product && !fitting.some((p) => p.id === product.id)) continue;
        if (!fitting.length) continue;
        const chosen = product ?? (fitting.length === 1 ? fitting[0]! : null);
        entries.push({
          resource,
          slot,
          view: {
            timeslot_uuid: timeslot.id,
            appointment_uuid: null,
            product_uuid: chosen?.id ?? null,
            resource_uuid: resource.id,
            product_name: chosen?.name ?? null,
            resource_name: resource.publicName,
            contact_channel: contact,
            capacity: timeslot.defaultCapacity,
            capacity_left: timeslot.defaultCapacity,
            products: fitting.map((p) => ({ uuid: p.id, name: p.name })),
            kind: 'models.Bookable',
          },
        });
      }
    }

    for (const appointment of busy) {
      const left = appointment.capacity - (occupancy.get(appointment.id) ?? 0);
      if (!appointment.acceptBookings || appointment.start <= now || left <= 0) continue;
      if (appointment.timeslot && appointment.timeslot.state !== 'BOOKABLE') continue;
      const appointmentProduct = appointment.product;
      if (appointmentProduct && !channelOffersProduct(rows, channel, appointmentProduct.id)) continue;
      if (product && appointmentProduct?.id !== product.id) continue;
      const appointmentContact = appointment.contact
        ? await contactOf(`a:${appointment.contact.id}:${appointment.contactProfile?.id ?? ''}`, { contactProfile: appointment.contactProfile, contact: appointment.contact })
        : contact;
      entries.push({
        resource,
        slot: { start: appointment.start, end: appointment.end },
        view: {
          timeslot_uuid: appointment.timeslot?.id ?? null,
          appointment_uuid: appointment.id,
          product_uuid: appointmentProduct?.id ?? null,
          resource_uuid: resource.id,
          product_name: appointment.productName ?? appointmentProduct?.name ?? null,
          resource_name: resource.publicName,
          contact_channel: appointmentContact,
          capacity: appointment.capacity,
          capacity_left: left,
          products: appointmentProduct ? [{ uuid: appointmentProduct.id, name: appointmentProduct.name }] : [],
          kind: 'models.LotAppointment',
        },
      });
    }
  }

  entries.sort((a, b) => a.slot.start.getTime() - b.slot.start.getTime() || a.resource.publicName.localeCompare(b.resource.publicName));
  const groups = new Map<string, BookableView[]>();
  for (const entry of entries.slice(0, BOOKABLES_MAX)) {
    const tz = entry.resource.provider.timeZone;
    const view: BookableView = {
      start: formatWithOffset(entry.slot.start, tz),
      end: formatWithOffset(entry.slot.end, tz),
      formattedStart: timeOf(entry.slot.start),
      formattedEnd: timeOf(entry.slot.end),
      ...entry.view,
    };
    const key = groupOf(entry.slot.start);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(view);
  }
  return { groups: [...groups.entries()], publicVisible };
}

/** Timeslots open for booking and active appointments of the resources between now and the horizon. */
async function loadCalendar(ctx: Context, resources: Resource[], now: Date, horizon: Date) {
  const ids = resources.map((r) => r.id);
  const [timeslots, appointments] = await Promise.all([
    ctx.em.find(Timeslot, { resource: { $in: ids }, state: 'BOOKABLE', end: { $gt: now }, start: { $lt: horizon } }, { orderBy: { start: 'asc' } }),
    ctx.em.find(
      Appointment,
      { resource: { $in: ids }, state: 'ACTIVE', archived: false, end: { $gt: now }, start: { $lt: horizon } },
      { populate: ['product', 'timeslot', 'contact', 'contactProfile'], orderBy: { start: 'asc' } },
    ),
  ]);
  // A cancelled appointment keeps its slot's (timeslot, start) key, so that slot stays closed to the public.
  const closed = timeslots.length
    ? await ctx.em.find(
        Appointment,
        { timeslot: { $in: timeslots.map((t) => t.id) }, $or: [{ state: 'CANCELLED' }, { archived: true }] },
        { fields: ['id', 'timeslot', 'start'] },
      )
    : [];
  return { timeslots, appointments, closed };
}

/** Whether a slot of `minutes` suits the product's minimum and maximum duration. */
export const fitsRaster = (product: Product, minutes: number): boolean =>
  (product.minDuration ?? 0) <= minutes && (product.maxDuration ?? Infinity) >= minutes;

/** Products a resource offers: those listed on it, or every product of its provider when none is listed. */
export async function productsOf(ctx: Context, resource: Resource): Promise<Product[]> {
  await ctx.em.populate(resource, ['products']);
  const listed = resource.products.getItems();
  if (listed.length) return [...listed].sort((a, b) => a.name.localeCompare(b.name));
  return ctx.em.find(Product, { provider: resource.provider }, { orderBy: { name: 'asc' } });
}

/** A product of the resource's provider by UUID or reference; unknown is a 400 naming the parameter. */
async function findProduct(ctx: Context, resource: Resource, prdRef: string): Promise<Product> {
  const product = await ctx.em.findOne(Product, isUuid(prdRef) ? { id: prdRef, provider: resource.provider } : { reference: prdRef, provider: resource.provider });
  if (!product) throw validationError(`prdRef: no product ${prdRef} for this resource`);
  return product;
}
