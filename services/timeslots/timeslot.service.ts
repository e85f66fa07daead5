import type { FilterQuery } from '@mikro-orm/core';
import { z } from 'zod';
import { Appointment } from '../appointments/appointment.entity.js';
import { type ParticipationViewOfRow, readAppointmentViews } from '../appointments/appointment.service.js';
import type { AppointmentView } from '../appointments/appointment.view.js';
import type { ParticipationView } from '../participations/participation.service.js';
import { locationInput } from '../kernel/address-input.js';
import { type Context, inTransaction, requireCrm } from '../kernel/context.js';
import { DomainError, notFound, validationError } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import { type Keyset, keysetPage, type Page, type PageRequest, pageSize } from '../kernel/pagination.js';
import { flexibleBoolean, parseInput, requiredText } from '../kernel/validation.js';
import { parseDateTimeInput } from '../kernel/wall-clock.js';
import type { Provider } from '../providers/provider.entity.js';
import { getProvider } from '../providers/provider.service.js';
import { Resource } from '../resources/resource.entity.js';
import { getResourceOf } from '../resources/resource.lookup.js';
import { announceTimeslot } from './timeslot-events.js';
import { Timeslot, TIMESLOT_STATES } from './timeslot.entity.js';

/** Upper bound of timeslots per create request. */
export const TIMESLOT_BATCH_MAX = 500;
const raster = z.number().int().positive().max(24 * 60);
const defaultCapacity = z.number().int().positive().max(100_000);

const timeslotInput = z.object({
  reference: z.string().trim().min(1).max(255).nullish(),
  resourceReference: requiredText(),
  start: z.string().nullish(),
  end: z.string(),
  raster,
  defaultCapacity,
  defaultAcceptBookings: flexibleBoolean(),
  address: locationInput().nullish(),
  state: z.enum(TIMESLOT_STATES),
});
export const timeslotCreateInput = z.object({ timeslots: z.array(timeslotInput).min(1).max(TIMESLOT_BATCH_MAX) });

export const timeslotUpdateInput = z.object({
  start: z.string().optional(),
  end: z.string().optional(),
  raster: raster.optional(),
  defaultCapacity: defaultCapacity.optional(),
  defaultAcceptBookings: flexibleBoolean().optional(),
  address: locationInput().nullish(),
  state: z.enum(TIMESLOT_STATES).optional(),
});

/**
 * Creates a batch of timeslots, all or none. A missing reference is
 * generated; a missing start means "now". Timeslots of one resource may not
 * overlap, neither each other nor existing ones.
 */
export async function createTimeslots(ctx: Context, providerReference: string, raw: unknown): Promise<Timeslot[]> {
  const crm = requireCrm(ctx);
  const input = parseInput(timeslotCreateInput, raw);
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const created: Timeslot[] = [];
    for (const [i, item] of input.timeslots.entries()) {
      const field = (name: string) => `timeslots[${i}].${name}`;
      const resource = await tx.em.findOne(Resource, { crm, provider, reference: item.resourceReference, deletedAt: null });
      if (!resource) throw validationError(`${field('resourceReference')}: no resource ${item.resourceReference}`);
      const start = item.start ? parseDateTimeInput(item.start, provider.timeZone, field('start')) : startOfMinute(tx.clock.now());
      const end = parseDateTimeInput(item.end, provider.timeZone, field('end'));
      if (end <= start) throw validationError(`${field('end')} must be after start`);
      const reference = item.reference ?? `timeslot-${newId()}`;
      if (created.some((t) => t.reference === reference) || (await tx.em.count(Timeslot, { crm, reference }))) {
        throw new DomainError('CONFLICT', `Timeslot reference ${reference} already exists`);
      }
      const timeslot = tx.em.create(Timeslot, {
        crm,
        resource,
        reference,
        start,
        end,
        raster: item.raster,
        defaultCapacity: item.defaultCapacity,
        defaultAcceptBookings: item.defaultAcceptBookings,
        address: item.address ?? null,
        state: item.state,
      });
      await assertNoOverlap(tx, timeslot, created);
      created.push(timeslot);
    }
    await tx.em.flush();
    for (const timeslot of created) await announceTimeslot(tx, timeslot);
    return created;
  });
}

/** Timeslots a page of `listTimeslots` holds at most. */
export const TIMESLOT_PAGE_MAX = 200;

const TIMESLOT_KEYSET: Keyset = {
  list: 'timeslots',
  alias: 't',
  at: { property: 'start', column: 'start' },
  tie: { property: 'id', column: 'id', uuid: true },
  order: 'asc',
};

export interface TimeslotWithAppointments<P extends ParticipationView = ParticipationView> {
  timeslot: Timeslot;
  /**
   * The views of the appointments made from it and of the CRM's appointments
   * of its resource (made without timeslot) that overlap it, by start.
   */
  appointments: AppointmentView<P>[];
}

/** Whose timeslots listTimeslots lists, and the period (text as the request gave it). */
export interface TimeslotQuery {
  providerReference: string;
  resourceReference: string;
  from?: string;
  to?: string;
}

/**
 * A resource's timeslots overlapping [from, to), by start, each with the
 * views of its appointments (see TimeslotWithAppointments; participations shaped by
 * `participationView`): all of them, or with `page` one page of them
 * (`first` 1..TIMESLOT_PAGE_MAX).
 */
export async function listTimeslots<P extends ParticipationView>(ctx: Context, query: TimeslotQuery, participationView: ParticipationViewOfRow<P>): Promise<TimeslotWithAppointments<P>[]>;
export async function listTimeslots<P extends ParticipationView>(
  ctx: Context,
  query: TimeslotQuery,
  participationView: ParticipationViewOfRow<P>,
  page: PageRequest,
): Promise<Page<TimeslotWithAppointments<P>>>;
export async function listTimeslots<P extends ParticipationView>(
  ctx: Context,
  { providerReference, resourceReference, ...range }: TimeslotQuery,
  participationView: ParticipationViewOfRow<P>,
  page?: PageRequest,
): Promise<TimeslotWithAppointments<P>[] | Page<TimeslotWithAppointments<P>>> {
  if (page) pageSize(page.first, TIMESLOT_PAGE_MAX);
  const provider = await getProvider(ctx, providerReference);
  if (!range.from) throw validationError('query parameter from is required');
  if (!range.to) throw validationError('query parameter to is required');
  const from = parseDateTimeInput(range.from, provider.timeZone, 'from');
  const to = parseDateTimeInput(range.to, provider.timeZone, 'to');
  if (to <= from) throw validationError('to must be after from');
  const resource = await getResourceOf(ctx, provider, resourceReference);
  const where: FilterQuery<Timeslot> = { resource, start: { $lt: to }, end: { $gt: from } };
  if (!page) return withAppointments(ctx, await ctx.em.find(Timeslot, where, { orderBy: { start: 'asc' }, populate: ['resource'] }), participationView);
  const found = await keysetPage(ctx.em.createQueryBuilder(Timeslot, TIMESLOT_KEYSET.alias).where(where), TIMESLOT_KEYSET, page, (ids) =>
    ctx.em.find(Timeslot, { id: { $in: ids } }, { populate: ['resource'] }),
  );
  const withThem = await withAppointments(ctx, found.edges.map((edge) => edge.node), participationView);
  return { ...found, edges: found.edges.map((edge, i) => ({ cursor: edge.cursor, node: withThem[i]! })) };
}

/**
 * The timeslots (of one resource) with the views of their appointments, read
 * in one statement: those made from each timeslot, and the CRM's
 * appointments of the resource without timeslot, with every timeslot they
 * overlap (they take its slots as much as the others do).
 */
async function withAppointments<P extends ParticipationView>(
  ctx: Context,
  timeslots: Timeslot[],
  participationView: ParticipationViewOfRow<P>,
): Promise<TimeslotWithAppointments<P>[]> {
  if (!timeslots.length) return [];
  const resourceId = timeslots[0]!.resource.id;
  const earliest = new Date(Math.min(...timeslots.map((t) => t.start.getTime())));
  const latest = new Date(Math.max(...timeslots.map((t) => t.end.getTime())));
  const read = await readAppointmentViews(
    ctx,
    `(a.timeslot_id = any(?::uuid[]) or (a.timeslot_id is null and a.resource_id = ? and a.start < ? and a."end" > ?))`,
    [timeslots.map((t) => t.id), resourceId, latest, earliest],
    participationView,
  );
  const byTimeslot = new Map<string, AppointmentView<P>[]>();
  const add = (timeslotId: string, view: AppointmentView<P>) => {
    const views = byTimeslot.get(timeslotId);
    if (views) views.push(view);
    else byTimeslot.set(timeslotId, [view]);
  };
  for (const { timeslotId, startMs, endMs, view } of read) {
    if (timeslotId) add(timeslotId, view);
    else for (const t of timeslots) if (startMs < t.end.getTime() && endMs > t.start.getTime()) add(t.id, view);
  }
  return timeslots.map((timeslot) => ({ timeslot, appointments: byTimeslot.get(timeslot.id) ?? [] }));
}

/**
 * Changes the supplied fields. Moving start, end or raster is refused while
 * active appointments made from the timeslot exist, since they would fall
 * off the grid.
 */
export async function updateTimeslot(ctx: Context, providerReference: string, reference: string, raw: unknown): Promise<Timeslot> {
  const input = parseInput(timeslotUpdateInput, raw);
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const timeslot = await timeslotOf(tx, provider, reference);
    const start = input.start !== undefined ? parseDateTimeInput(input.start, provider.timeZone, 'start') : timeslot.start;
    const end = input.end !== undefined ? parseDateTimeInput(input.end, provider.timeZone, 'end') : timeslot.end;
    if (end <= start) throw validationError('end must be after start');
    const previous = { start: timeslot.start, end: timeslot.end, raster: timeslot.raster };
    const gridChanges = start.getTime() !== timeslot.start.getTime() || end.getTime() !== timeslot.end.getTime() || (input.raster !== undefined && input.raster !== timeslot.raster);
    if (gridChanges && (await activeAppointmentCount(tx, timeslot)) > 0) {
      throw new DomainError('HAS_ACTIVE_APPOINTMENTS', `Timeslot ${reference} has active appointments; its start, end and raster cannot change`);
    }
    timeslot.start = start;
    timeslot.end = end;
    if (input.raster !== undefined) timeslot.raster = input.raster;
    if (input.defaultCapacity !== undefined) timeslot.defaultCapacity = input.defaultCapacity;
    if (input.defaultAcceptBookings !== undefined) timeslot.defaultAcceptBookings = input.defaultAcceptBookings;
    if (input.address !== undefined) timeslot.address = input.address ?? null;
    if (input.state !== undefined) timeslot.state = input.state;
    if (gridChanges) await assertNoOverlap(tx, timeslot, []);
    await tx.em.flush();
    await announceTimeslot(tx, timeslot, previous);
    return timeslot;
  });
}

/** Deletes a timeslot; refused (409) while an appointment made from it is not cancelled. */
export async function deleteTimeslot(ctx: Context, providerReference: string, reference: string): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const timeslot = await timeslotOf(tx, provider, reference);
    if ((await activeAppointmentCount(tx, timeslot)) > 0) {
      throw new DomainError('HAS_ACTIVE_APPOINTMENTS', `Timeslot ${reference} has an appointment that is not cancelled; delete or cancel it first`);
    }
    timeslot.state = 'CREATED';
    await announceTimeslot(tx, timeslot);
    tx.em.remove(timeslot);
  });
}

/**
 * The timeslot, locked FOR UPDATE: a first booking shares the timeslot's row
 * while it cuts its appointment from it (booking/place-claim.ts), so an
 * update or delete waits for that booking and then counts its appointment,
 * and a booking that comes later sees the changed timeslot. No off-grid or
 * orphaned appointment either way.
 */
async function timeslotOf(ctx: Context, provider: Provider, reference: string): Promise<Timeslot> {
  const found = await ctx.em.findOne(Timeslot, { crm: requireCrm(ctx), reference, resource: { provider } }, { populate: ['resource'] });
  if (!found) throw notFound('Timeslot', reference);
  // Only the timeslot's row (its resource stays shared with bookings), then read again what the lock protects.
  await ctx.em.execute('select 1 from timeslot where id = ? for update', [found.id]);
  const timeslot = await ctx.em.refresh(found, { populate: ['resource'] });
  if (!timeslot) throw notFound('Timeslot', reference);
  return timeslot;
}

const activeAppointmentCount = (ctx: Context, timeslot: Timeslot) => ctx.em.count(Appointment, { timeslot, state: 'ACTIVE' });

async function assertNoOverlap(ctx: Context, timeslot: Timeslot, batch: Timeslot[]): Promise<void> {
  const overlaps = (other: Timeslot) => other.resource.id === timeslot.resource.id && other.start < timeslot.end && other.end > timeslot.start;
  const clash =
    batch.find(overlaps) ??
    (await ctx.em.findOne(Timeslot, { resource: timeslot.resource, id: { $ne: timeslot.id }, start: { $lt: timeslot.end }, end: { $gt: timeslot.start } }));
  if (clash) throw new DomainError('CONFLICT', `Timeslot ${timeslot.reference} overlaps timeslot ${clash.reference} of the same resource`);
}

function startOfMinute(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 60_000) * 60_000);
}
