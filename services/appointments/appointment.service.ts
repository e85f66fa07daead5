import { z } from 'zod';
import { resolveContact } from '../contact-profiles/contact-assignment.js';
import { locationInput } from '../kernel/address-input.js';
import { type Context, inTransaction, requireCrm } from '../kernel/context.js';
import { DomainError, validationError } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import { type Keyset, keysetPage, type Page, type PageRequest, pageSize } from '../kernel/pagination.js';
import { sql } from '../kernel/sql.js';
import { flexibleBoolean, optionalText, parseInput, requiredText } from '../kernel/validation.js';
import { type ParticipantFacts, type ParticipationFacts, type ParticipationView, participationViewOf } from '../participations/participation.service.js';
import { parseDateTimeInput } from '../kernel/wall-clock.js';
import { Product } from '../products/product.entity.js';
import type { Provider } from '../providers/provider.entity.js';
import { getProvider } from '../providers/provider.service.js';
import { Resource } from '../resources/resource.entity.js';
import { Appointment, CURRENCIES } from './appointment.entity.js';
import { APPOINTMENT_VIEW_POPULATE, type AppointmentFacts, type AppointmentRefs, type AppointmentView, appointmentViewOf, visibleParticipations } from './appointment.view.js';
import { announceNewAppointments } from './capacity-events.js';
import { addEmbeddedParticipations, EMBEDDED_PARTICIPATIONS_MAX, embeddedParticipationInput } from './embedded-participations.js';
import { expandSeries, SERIES_MAX_APPOINTMENTS, seriesSizeProblem, spansSeveralDays } from './series.js';

const price = z.object({ value: z.number().finite().min(0), currency: z.enum(CURRENCIES) }).nullish();
const capacity = z.number().int().min(0).max(100_000);

const common = {
  capacity: capacity.nullish(),
  acceptBookings: flexibleBoolean().nullish(),
  resourceReference: requiredText(),
  productReference: requiredText(),
  productName: optionalText(),
  contact: optionalText(),
  contactReference: optionalText(),
  contactProfileReference: optionalText(),
  address: locationInput().nullish(),
  price,
  description: optionalText(10_000),
  notes: optionalText(10_000),
};

export const singleInput = z.object({
  ...common,
  reference: requiredText(),
  start: z.string(),
  end: z.string(),
  archived: z.boolean().nullish(),
  participations: z.array(embeddedParticipationInput).max(EMBEDDED_PARTICIPATIONS_MAX).nullish(),
});

export const seriesInput = z.object({
  ...common,
  from: z.string().nullish(),
  to: z.string().nullish(),
  series_data: z.object({
    from: z.string(),
    to: z.string(),
    raster: z.number().int().positive().max(24 * 60),
    weekdays: z.array(z.enum(['1', '2', '3', '4', '5', '6', '7'])).min(1).max(7).nullish(),
  }),
});

export type CreateAppointmentsResult = { kind: 'single'; appointment: Appointment } | { kind: 'series'; seriesId: string; appointments: Appointment[] };

/**
 * Creates one appointment, or a series when the body has `series_data`.
 * Date-times without offset are wall-clock times of the provider's zone. A
 * single appointment's `participations` are created with it, by the rules of
 * `POST …/participations`; a refused one leaves nothing created.
 */
export async function createAppointments(ctx: Context, providerReference: string, raw: unknown): Promise<CreateAppointmentsResult> {
  const isSeries = typeof raw === 'object' && raw !== null && 'series_data' in raw && (raw as Record<string, unknown>).series_data != null;
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    if (isSeries) return createSeries(tx, provider, raw);
    const input = parseInput(singleInput, raw);
    const start = parseDateTimeInput(input.start, provider.timeZone, 'start');
    const end = parseDateTimeInput(input.end, provider.timeZone, 'end');
    if (end <= start) throw validationError('end must be after start');
    if (await tx.em.count(Appointment, { crm: provider.crm, reference: input.reference })) {
      throw new DomainError('CONFLICT', `Appointment reference ${input.reference} already exists`);
    }
    const fields = await commonFields(tx, provider, input);
    const appointment = tx.em.create(Appointment, { ...fields, reference: input.reference, start, end, archived: input.archived ?? false });
    await tx.em.flush();
    await announceNewAppointments(tx, [appointment]);
    if (input.participations?.length) await addEmbeddedParticipations(tx, provider, appointment, input.participations);
    await tx.em.populate(appointment, APPOINTMENT_VIEW_POPULATE, { refresh: true });
    return { kind: 'single' as const, appointment };
  });
}

/** Appointments of a series created and flushed at a time. */
const SERIES_FLUSH_CHUNK = 100;

async function createSeries(ctx: Context, provider: Provider, raw: unknown): Promise<CreateAppointmentsResult> {
  const input = parseInput(seriesInput, raw);
  const zone = provider.timeZone;
  const rangeStart = parseDateTimeInput(input.series_data.from, zone, 'series_data.from');
  const rangeEnd = parseDateTimeInput(input.series_data.to, zone, 'series_data.to');
  if (rangeEnd <= rangeStart) throw validationError('series_data.to must be after series_data.from');
  const windowStart = input.from ? parseDateTimeInput(input.from, zone, 'from') : rangeStart;
  const windowEnd = input.to ? parseDateTimeInput(input.to, zone, 'to') : rangeEnd;
  if (windowEnd <= windowStart) throw validationError('to must be after from');
  const severalDays = spansSeveralDays(rangeStart, rangeEnd, zone);
  if (severalDays && !input.series_data.weekdays) throw validationError('series_data.weekdays is required when the series spans more than one day');
  const plan = {
    windowStart,
    windowEnd,
    rangeStart,
    rangeEnd,
    raster: input.series_data.raster,
    weekdays: input.series_data.weekdays?.map(Number) ?? null,
    timeZone: zone,
  };
  // Checked in O(1) before the days are walked: a huge period or a raster longer than the window is refused at once.
  const sizeProblem = seriesSizeProblem(plan);
  if (sizeProblem) throw validationError(sizeProblem);
  const slots = expandSeries(plan);
  if (slots.length === 0) throw validationError('series_data yields no appointment: check from, to, raster and weekdays');
  if (slots.length > SERIES_MAX_APPOINTMENTS) throw validationError(`a series may hold at most ${SERIES_MAX_APPOINTMENTS} appointments`);
  const fields = await commonFields(ctx, provider, input);
  const seriesId = newId();
  // Created and written in chunks: each flush awaits the database, so a series of 2000 never holds the
  // event loop for long and other requests keep being answered meanwhile.
  const appointments: Appointment[] = [];
  for (let i = 0; i < slots.length; i += SERIES_FLUSH_CHUNK) {
    for (const [j, slot] of slots.slice(i, i + SERIES_FLUSH_CHUNK).entries()) {
      appointments.push(ctx.em.create(Appointment, { ...fields, reference: `series-${seriesId}-${i + j + 1}`, seriesId, start: slot.start, end: slot.end }));
    }
    await ctx.em.flush();
  }
  await announceNewAppointments(ctx, appointments);
  await ctx.em.populate(appointments, APPOINTMENT_VIEW_POPULATE);
  return { kind: 'series', seriesId, appointments };
}

async function commonFields(ctx: Context, provider: Provider, input: z.output<typeof singleInput> | z.output<typeof seriesInput>) {
  const crm = requireCrm(ctx);
  const resource = await ctx.em.findOne(Resource, { crm, provider, reference: input.resourceReference, deletedAt: null });
  if (!resource) throw validationError(`resourceReference: no resource ${input.resourceReference}`);
  const product = await ctx.em.findOne(Product, { crm, provider, reference: input.productReference });
  if (!product) throw validationError(`productReference: no product ${input.productReference}`);
  const { contact, contactProfile } = await resolveContact(ctx, provider, input.contact ?? input.contactReference, input.contactProfileReference);
  return {
    crm,
    provider,
    resource,
    product,
    capacity: input.capacity ?? 0,
    acceptBookings: input.acceptBookings ?? false,
    productName: input.productName ?? null,
    contact,
    contactProfile,
    address: input.address ?? resource.address,
    price: input.price ?? null,
    description: input.description ?? null,
    notes: input.notes ?? null,
  };
}

export interface AppointmentFilter {
  productRef?: string;
  resourceRef?: string;
  includeArchived: boolean;
  /** Only appointments starting in [from, to). */
  from?: Date;
  to?: Date;
}

/** Appointments a page of `listAppointments` holds at most. */
export const APPOINTMENT_PAGE_MAX = 200;

const APPOINTMENT_KEYSET: Keyset = {
  list: 'appointments',
  alias: 'a',
  at: { property: 'start', column: 'start' },
  // Unique per provider: (crm, reference) is unique and a provider belongs to one CRM.
  tie: { property: 'reference', column: 'reference' },
  order: 'asc',
};

/**
 * One page (`first` 1..APPOINTMENT_PAGE_MAX) of a provider's appointments
 * (active and cancelled), oldest first (ties by reference), filtered by
 * product and resource reference and the start window, as views whose
 * participations `participationView` shapes (the GraphQL nodes); all of
 * them: listAppointmentViews.
 */
export async function listAppointments<P extends ParticipationView>(
  ctx: Context,
  providerReference: string,
  filter: AppointmentFilter,
  page: PageRequest,
  participationView: ParticipationViewOfRow<P>,
): Promise<Page<AppointmentView<P>>> {
  pageSize(page.first, APPOINTMENT_PAGE_MAX);
  const { where, params } = await appointmentFilter(ctx, providerReference, filter);
  return keysetPage(ctx.em.createQueryBuilder(Appointment, APPOINTMENT_KEYSET.alias).where(where, params), APPOINTMENT_KEYSET, page, async (ids) =>
    (await readAppointmentViews(ctx, 'a.id = any(?::uuid[])', [ids], participationView)).map(({ view }) => ({ ...view, id: view.uuid })),
  );
}

/**
 * The provider's appointments a filter keeps, as SQL on appointment `a`
 * alone (for the page's keyset query and for the listing's statement) with
 * its parameters; the provider must exist (404).
 */
async function appointmentFilter(ctx: Context, providerReference: string, filter: AppointmentFilter): Promise<{ where: string; params: unknown[] }> {
  if (filter.from && filter.to && filter.to <= filter.from) throw validationError('to must be after from');
  const provider = await getProvider(ctx, providerReference);
  // Each optional value is bound twice: "none given" or "equal to it".
  const optional = (value: unknown) => [value ?? null, value ?? null];
  return {
    where: `a.provider_id = ? and (?::boolean or not a.archived)
       and (?::text is null or a.product_id in (select id from product where provider_id = a.provider_id and reference = ?))
       and (?::text is null or a.resource_id in (select id from resource where provider_id = a.provider_id and reference = ?))
       and (?::timestamptz is null or a.start >= ?::timestamptz) and (?::timestamptz is null or a.start < ?::timestamptz)`,
    params: [provider.id, filter.includeArchived, ...optional(filter.productRef), ...optional(filter.resourceRef), ...optional(filter.from), ...optional(filter.to)],
  };
}

/** A participation of APPOINTMENT_VIEW_SELECT's JSON, its times read. */
export interface ParticipationRow extends ParticipationFacts {
  id: string;
  createdAt: Date;
  expiresAt: Date | null;
  customer: ParticipantFacts | null;
}

/** How a view built from rows shows a participation of the appointment with this reference. */
export type ParticipationViewOfRow<P extends ParticipationView> = (participation: ParticipationRow, appointmentReference: string) => P;

/** A row of APPOINTMENT_VIEW_SELECT: the columns and relations the /crms view shows, participations as JSON. */
interface AppointmentViewRow extends Omit<AppointmentFacts, 'start' | 'end'>, AppointmentRefs {
  timeslotId: string | null;
  start: Date | string;
  end: Date | string;
  participations: (Omit<ParticipationRow, 'createdAt' | 'expiresAt'> & { createdAt: string; expiresAt: string | null })[];
}

/** Appointments with what their view shows, participations as JSON; the caller adds its WHERE (alias `a`) and ORDER BY. */
const APPOINTMENT_VIEW_SELECT = `select a.id, a.reference, a.accept_bookings as "acceptBookings", a.address, a.archived, a.capacity, a.description,
    a.start, a."end", a.notes, a.price, a.series_id as "seriesId", a.state, a.timeslot_id as "timeslotId", u.reference as "contactReference",
    pr.reference as "productReference", coalesce(a.product_name, pr.name) as "productName", r.reference as "resourceReference",
    coalesce((select json_agg(json_build_object('id', p.id, 'reference', p.reference, 'state', p.state, 'messages', p.messages, 'createdAt', p.created_at,
        'expiresAt', p.expires_at, 'customer', case when c.id is null then null else json_build_object('reference', c.reference, 'erasedAt', c.erased_at,
        'userName', c.user_name, 'email', c.email, 'mobile', c.mobile, 'note', c.note) end) order by p.created_at, p.id)
       from participation p left join customer c on c.id = p.customer_id where p.appointment_id = a.id), '[]') as participations
  from appointment a join resource r on r.id = a.resource_id left join product pr on pr.id = a.product_id left join app_user u on u.id = a.contact_id`;

/** An appointment view read by readAppointmentViews, with the timeslot the appointment was made from. */
export interface AppointmentViewRead<P extends ParticipationView> {
  timeslotId: string | null;
  /** Its period, as instants. */
  startMs: number;
  endMs: number;
  view: AppointmentView<P>;
}

/**
 * Appointment views read as plain rows in one statement (`where` binds
 * `params`), in start and reference order, shaped by the same
 * appointmentViewOf as an entity's: the ORM's find with the view's five
 * relations cost ~6–7 ms of CPU for five appointments on the benchmark host.
 */
export async function readAppointmentViews<P extends ParticipationView>(
  ctx: Context,
  where: string,
  params: unknown[],
  participationView: ParticipationViewOfRow<P>,
): Promise<AppointmentViewRead<P>[]> {
  const rows = await sql<AppointmentViewRow>(ctx, `${APPOINTMENT_VIEW_SELECT} where ${where} order by a.start, a.reference`, params);
  const now = ctx.clock.now();
  return rows.map((row) => {
    const participations = row.participations.map((p) => ({ ...p, createdAt: new Date(p.createdAt), expiresAt: p.expiresAt === null ? null : new Date(p.expiresAt) }));
    const start = new Date(row.start);
    const end = new Date(row.end);
    const view = appointmentViewOf({ ...row, start, end }, row, visibleParticipations(participations, now).map((p) => participationView(p, row.reference)));
    return { timeslotId: row.timeslotId, startMs: start.getTime(), endMs: end.getTime(), view };
  });
}

/**
 * All of a provider's appointments (active and cancelled), oldest first
 * (ties by reference), filtered as listAppointments filters, as /crms views.
 */
export async function listAppointmentViews(ctx: Context, providerReference: string, filter: AppointmentFilter): Promise<AppointmentView[]> {
  const { where, params } = await appointmentFilter(ctx, providerReference, filter);
  return (await readAppointmentViews(ctx, where, params, participationViewOf)).map(({ view }) => view);
}
