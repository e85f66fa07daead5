import type { Location } from '../kernel/address.js';
import { type Context, RetryInOrmTransaction } from '../kernel/context.js';
import { sql } from '../kernel/sql.js';
import { DomainError, RetryableRefusal, validationError } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import { slotAt } from '../timeslots/slot-grid.js';
import { announceAppointmentChange } from '../live/appointment-events.js';
import { EVENT_VERSION_SQL } from '../live/event-version.js';
import { addTouchedResources, draftsJson, type OutboxDraft, outboxInsertFrom } from '../outbox/outbox.service.js';
import { BusyIndex, durationCandidates, type LotState, lotListed, productsForSlot } from './bookability.js';
import type { BookingScope, ScopeProduct, ScopeResource } from './booking-request.js';

export const SLOT_TAKEN_MESSAGE = 'Das überlappt mit einem anderen Termin.';
/** The documented refusal when the place is gone: 412 with errorCode 201. */
export const slotTaken = () => new DomainError('SLOT_TAKEN', SLOT_TAKEN_MESSAGE, '201');

/** An appointment of the booking flow as its row reads, with its timeslot's state. */
export interface LotRow {
  id: string;
  crm_id: string;
  provider_id: string;
  resource_id: string;
  product_id: string | null;
  timeslot_id: string | null;
  reference: string;
  start: Date;
  end: Date;
  capacity: number;
  accept_bookings: boolean;
  archived: boolean;
  state: 'ACTIVE' | 'CANCELLED';
  product_name: string | null;
  address: Location | null;
  contact_id: string | null;
  contact_profile_id: string | null;
  timeslot_state: string | null;
  /** Places taken when it was read (holds included until removed, as givePlace counts them). */
  places_taken: number;
  /** When its earliest hold runs out; null without holds. */
  first_hold_expiry: Date | string | null;
}

/** Raw rows carry timestamptz as text (the ORM's pg type parsers); these read them as instants. */
const instant = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));
const readLot = <T extends LotRow>(row: T): T => ({ ...row, start: instant(row.start), end: instant(row.end) });
const readTimeslot = (row: TimeslotRow): TimeslotRow => ({ ...row, start: instant(row.start), end: instant(row.end), own_lot: row.own_lot && readLot(row.own_lot) });

const LOT_COLUMNS = `a.id, a.crm_id, a.provider_id, a.resource_id, a.product_id, a.timeslot_id, a.reference, a.start, a."end",
  a.capacity, a.accept_bookings, a.archived, a.state, a.product_name, a.address, a.contact_id, a.contact_profile_id, t.state as timeslot_state,
  a.places_taken, (select min(h.expires_at) from participation h where h.appointment_id = a.id and h.state = 'RESERVED') as first_hold_expiry`;

/** The facts of a lot the bookability rule looks at. */
export const lotState = (lot: LotRow): LotState => ({
  state: lot.state,
  archived: lot.archived,
  acceptBookings: lot.accept_bookings,
  startMs: lot.start.getTime(),
  capacity: lot.capacity,
  timeslotState: lot.timeslot_state,
  // Loaded only through an open resource (see findLot).
  resourceOpen: true,
});

export interface ClaimRequest {
  scope: BookingScope;
  /** A timeslot UUID (slot of kind Bookable) or an appointment UUID (kind LotAppointment). */
  uuid: string;
  /** Which one to try first: the request's field says what the client meant. */
  uuidKind: 'timeslot' | 'appointment';
  from: Date;
  to: Date;
  product: ScopeProduct | null;
  /**
   * A holder completing after the hold expired and the worker removed it, and
   * with it the appointment that held nothing else: an unknown UUID then
   * means the slot [from, to) of the resource's timeslots.
   */
  holderWithoutHold?: boolean;
  /**
   * A lock the caller needs before anything is written (the consumer's, see
   * consumer.ts), taken by the claim's first read in the same statement
   * (one round trip for both); cleared once taken.
   */
  lockFirst?: AdvisoryLock;
}

export interface Claim {
  lot: LotRow;
  /** The appointment is made by this claim (the first booking of its slot): givePlace inserts it with the place. */
  created: boolean;
  resource: ScopeResource;
  /** The insert of the slot's new appointment, sent by givePlace in the statement that gives its first place. */
  insert?: SqlPart;
}

/**
 * Finds the appointment a booking-flow request counts against, or prepares
 * its insert from the timeslot on the first booking of a slot. No lock wider
 * than the slot is taken: givePlace inserts a new appointment with ON
 * CONFLICT on (timeslot, start), so the first of two concurrent first
 * bookings creates it and the second claims again and joins it (see
 * claimAndGive); PostgreSQL's exclusion constraint refuses a new appointment
 * whose blocked period (lead/follow-up time included) overlaps another's
 * (412). The resources are held FOR SHARE against a concurrent delete or
 * archive until commit. Places are given by givePlace, under the
 * appointment's row lock.
 */
async function claimPlace(ctx: Context, request: ClaimRequest): Promise<Claim> {
  const resourceIds = request.scope.resources.map((r) => r.id);
  const byAppointment = async () => {
    const lot = await findLot(ctx, 'a.id = ?', [request.uuid], resourceIds);
    return lot && joinLot(ctx, request, lot, true);
  };
  const byTimeslot = async () => {
    const timeslot = await findTimeslot(ctx, request, resourceIds);
    return timeslot && claimSlot(ctx, request, timeslot);
  };
  const [first, second] = request.uuidKind === 'appointment' ? [byAppointment, byTimeslot] : [byTimeslot, byAppointment];
  const claim = (await first()) ?? (await second()) ?? (request.holderWithoutHold ? await claimSlotAt(ctx, request) : null);
  if (!claim) throw validationError('timeslot_uuid: no open timeslot or appointment with this UUID for this resource');
  return claim;
}

/** The slot [from, to) of a timeslot of the resources, claimed afresh; null when no timeslot covers it. */
async function claimSlotAt(ctx: Context, request: ClaimRequest): Promise<Claim | null> {
  const resourceIds = request.scope.resources.map((r) => r.id);
  const rows = await sql<TimeslotRow>(ctx, `${TIMESLOT_SELECT} where t.resource_id in (${resourceIds.map(() => '?').join(',')}) and t.start <= ? and t."end" >= ?
       and r.deleted_at is null and not r.archived limit 1 for share of r, t`,
    [...timeslotSelectParams(request), ...resourceIds, request.from, request.to],
  );
  return rows[0] ? claimSlot(ctx, request, readTimeslot(rows[0])) : null;
}

interface TimeslotRow {
  id: string;
  resource_id: string;
  start: Date;
  end: Date;
  raster: number;
  default_capacity: number;
  default_accept_bookings: boolean;
  address: Location | null;
  state: string;
  /** Active appointments of its resource whose blocked period reaches the requested slot (see busyWindow). */
  busy: { timeslot_id: string | null; start: string; blocked_from: string; blocked_to: string }[];
  /** The appointment of this timeslot starting at the requested start, in any state (what joinExisting would read). */
  own_lot: LotRow | null;
}

/**
 * A timeslot with the busy periods its requested slot may meet and the
 * appointment already made for that slot, in one query; bound first: the
 * window (two parameters) and the requested start.
 */
const TIMESLOT_SELECT = `select t.id, t.resource_id, t.start, t."end", t.raster, t.default_capacity, t.default_accept_bookings, t.address, t.state,
    (select coalesce(json_agg(json_build_object('timeslot_id', a.timeslot_id, 'start', a.start, 'blocked_from', a.blocked_from, 'blocked_to', a.blocked_to)), '[]')
       from appointment a where a.resource_id = t.resource_id and a.state = 'ACTIVE' and not a.archived
        and tstzrange(a.blocked_from, a.blocked_to) && tstzrange(?::timestamptz, ?::timestamptz)) as busy,
    (select row_to_json(l) from (select ${LOT_COLUMNS} from appointment a where a.timeslot_id = t.id and a.start = ?::timestamptz) l) as own_lot
  from timeslot t join resource r on r.id = t.resource_id`;

/** The parameters TIMESLOT_SELECT binds before the caller's. */
const timeslotSelectParams = (request: ClaimRequest) => [...busyWindow(request), request.from];

/**
 * The period around the requested slot in which another appointment's
 * blocked period can matter: the slot widened by the longest lead and
 * follow-up time of the products the request may book.
 */
function busyWindow(request: ClaimRequest): [Date, Date] {
  const products = request.scope.resources.flatMap((r) => request.scope.offeredOf(r));
  const lead = Math.max(0, ...products.map((p) => p.leadTimeMinutes ?? 0));
  const followUp = Math.max(0, ...products.map((p) => p.followUpTimeMinutes ?? 0));
  return [new Date(request.from.getTime() - lead * 60_000), new Date(request.to.getTime() + followUp * 60_000)];
}

async function findTimeslot(ctx: Context, request: ClaimRequest, resourceIds: string[]): Promise<TimeslotRow | undefined> {
  const select = `${TIMESLOT_SELECT} where t.id = ? and t.resource_id in (${resourceIds.map(() => '?').join(',')})
       and r.deleted_at is null and not r.archived for share of r, t`;
  const params = [...timeslotSelectParams(request), request.uuid, ...resourceIds];
  const lock = request.lockFirst;
  request.lockFirst = undefined;
  const row = lock ? await selectAfterLock<TimeslotRow>(ctx, lock, select, params) : (await sql<TimeslotRow>(ctx, select, params))[0];
  return row ? readTimeslot(row) : undefined;
}

/**
 * Takes a transaction-scoped advisory lock and runs `select` (one row at
 * most) in the same statement. A select without FROM answers exactly one
 * row, so the lock is taken whether or not a row is found; the row comes
 * as JSON (timestamps as ISO text).
 */
async function selectAfterLock<T>(ctx: Context, lock: AdvisoryLock, select: string, params: unknown[]): Promise<T | null> {
  const [result] = await sql<{ row: T | null }>(ctx, `select ${lock.sql} is null as locked, (select row_to_json(x) from (${select}) x) as row`, [...lock.params, ...params]);
  return result?.row ?? null;
}

/** An appointment of the resources (their rows shared against delete/archive); null when there is none. Its places are counted by givePlace, under its lock. */
async function findLot(ctx: Context, where: string, params: unknown[], resourceIds: string[]): Promise<LotRow | null> {
  const rows = await sql<LotRow>(ctx, `select ${LOT_COLUMNS} from appointment a join resource r on r.id = a.resource_id left join timeslot t on t.id = a.timeslot_id
      where ${where} and a.resource_id in (${resourceIds.map(() => '?').join(',')}) and r.deleted_at is null and not r.archived
      for share of r`,
    [...params, ...resourceIds],
  );
  return rows[0] ? readLot(rows[0]) : null;
}

/**
 * The appointment of a live or expired hold (by its placeholder id), with the
 * hold's id; completeHold re-checks the hold under its row lock. With
 * `lockFirst` (a transaction-scoped advisory lock, see consumer.ts), that
 * lock is taken in the same statement: one round trip for both.
 */
export async function findHeldLot(
  ctx: Context,
  placeholderId: string,
  resourceIds: string[],
  lockFirst?: AdvisoryLock,
): Promise<{ lot: LotRow; holdId: string } | null> {
  const select = `select ${LOT_COLUMNS}, p.id as hold_id from participation p join appointment a on a.id = p.appointment_id
       join resource r on r.id = a.resource_id left join timeslot t on t.id = a.timeslot_id
      where p.placeholder_id = ? and p.state = 'RESERVED' and a.resource_id in (${resourceIds.map(() => '?').join(',')})
        and r.deleted_at is null and not r.archived
      for share of r`;
  const params = [placeholderId, ...resourceIds];
  const row = lockFirst ? await selectAfterLock<LotRow & { hold_id: string }>(ctx, lockFirst, select, params) : (await sql<LotRow & { hold_id: string }>(ctx, select, params))[0];
  if (!row) return null;
  const { hold_id: holdId, ...lot } = readLot(row);
  return { lot, holdId };
}

/** A piece of SQL with the values its `?`s bind. */
export interface SqlPart {
  sql: string;
  params: unknown[];
}

/** A transaction-scoped advisory lock as an SQL expression, e.g. `pg_advisory_xact_lock(hashtextextended(?, 0))`. */
export type AdvisoryLock = SqlPart;

/** Checks an existing appointment against the request: the same slot, still open, a product the channel offers. */
function joinLot(ctx: Context, request: ClaimRequest, lot: LotRow, named: boolean): Claim {
  if (named && (lot.start.getTime() !== request.from.getTime() || lot.end.getTime() !== request.to.getTime())) {
    throw validationError('from and to must be the start and end of the appointment');
  }
  if (!lotListed(lotState(lot), ctx.clock.now().getTime())) throw slotTaken();
  // Full when read, and no hold has run out that would give way (see givePlace): refused at once, so a sold-out
  // slot costs a crowd neither the consumer's lookup nor a wait for the appointment's lock.
  const holdRunOut = lot.first_hold_expiry !== null && instant(lot.first_hold_expiry) <= ctx.clock.now();
  if (lot.places_taken >= lot.capacity && !holdRunOut) throw slotTaken();
  const resource = request.scope.resources.find((r) => r.id === lot.resource_id)!;
  if (lot.product_id) {
    if (!request.scope.offeredOf(resource).some((p) => p.id === lot.product_id)) {
      if (named) throw validationError('product_uuid: this product is not offered on this channel');
      throw slotTaken();
    }
    if (request.product && request.product.id !== lot.product_id) {
      if (named) throw validationError('product_uuid does not match the appointment');
      // Somebody booked this slot first with another product.
      throw slotTaken();
    }
  }
  return { lot, created: false, resource };
}

/** The first booking of a slot of a timeslot creates its appointment; a later one joins it. */
async function claimSlot(ctx: Context, request: ClaimRequest, timeslot: TimeslotRow): Promise<Claim> {
  if (timeslot.state !== 'BOOKABLE') throw validationError('timeslot_uuid: this timeslot is not open for booking');
  const slot = slotAt(timeslot, request.from, request.to);
  if (!slot) throw validationError('from and to must be one slot of the timeslot grid');
  if (slot.start <= ctx.clock.now()) throw validationError('from lies in the past');
  const resource = request.scope.resources.find((r) => r.id === timeslot.resource_id)!;
  // A reserve names its product, so its durations apply; a booking without product_uuid gets the listing's rule.
  const sized = durationCandidates(request.scope.offeredOf(resource), timeslot.raster, request.product !== null);
  if (request.product && !sized.some((p) => p.id === request.product!.id)) {
    throw validationError('product_uuid: this product is not offered for this slot on this channel');
  }
  const period = { startMs: slot.start.getTime(), endMs: slot.end.getTime() };
  const busy = timeslot.busy;
  const own = busy.find((a) => a.timeslot_id === timeslot.id && instant(a.start).getTime() === period.startMs);
  // Read with the timeslot, in the same snapshot (and under the same share lock of the resource) as findLot would.
  if (own) return timeslot.own_lot && timeslot.own_lot.start.getTime() === period.startMs ? joinLot(ctx, request, timeslot.own_lot, false) : joinExisting(ctx, request, timeslot, period.startMs);

  const index = new BusyIndex(busy.map((a) => ({ startMs: instant(a.blocked_from).getTime(), endMs: instant(a.blocked_to).getTime() })));
  const fitting = productsForSlot(sized, period, { startMs: timeslot.start.getTime(), endMs: timeslot.end.getTime() }, index);
  const product = request.product ?? (fitting.length === 1 ? fitting[0]! : null);
  if (!product && fitting.length > 1) throw validationError('product_uuid is required: this slot offers several products');
  // A slot that is busy, or whose product's lead or follow-up time does not fit (any more), is taken for it.
  if (!product || !fitting.some((p) => p.id === product.id)) throw slotTaken();
  // An appointment without a place would be made for nothing (and, committed with the refusal, stay).
  if (timeslot.default_capacity < 1) throw slotTaken();

  const id = newId();
  // Run by givePlace with the first place; ON CONFLICT: somebody made this slot's appointment since we looked.
  const insert: SqlPart = {
    sql: `insert into appointment (id, crm_id, provider_id, resource_id, product_id, timeslot_id, reference, start, "end", capacity,
        accept_bookings, contact_id, contact_profile_id, address, archived, state, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, false, 'ACTIVE', ?)
       on conflict on constraint appointment_timeslot_start_unique do nothing
       returning id, capacity, places_taken, accept_bookings`,
    params: [
      id,
      resource.crm.id,
      resource.provider.id,
      resource.id,
      product.id,
      timeslot.id,
      `lot-${id}`,
      slot.start,
      slot.end,
      timeslot.default_capacity,
      timeslot.default_accept_bookings,
      resource.contact?.id ?? null,
      resource.contactProfile?.id ?? null,
      JSON.stringify(timeslot.address ?? resource.address ?? null),
      ctx.clock.now(),
    ],
  };
  const lot: LotRow = {
    id,
    crm_id: resource.crm.id,
    provider_id: resource.provider.id,
    resource_id: resource.id,
    product_id: product.id,
    timeslot_id: timeslot.id,
    reference: `lot-${id}`,
    start: slot.start,
    end: slot.end,
    capacity: timeslot.default_capacity,
    accept_bookings: timeslot.default_accept_bookings,
    archived: false,
    state: 'ACTIVE',
    product_name: null,
    address: timeslot.address ?? resource.address ?? null,
    contact_id: resource.contact?.id ?? null,
    contact_profile_id: resource.contactProfile?.id ?? null,
    timeslot_state: timeslot.state,
    places_taken: 0,
    first_hold_expiry: null,
  };
  return { lot, created: true, resource, insert };
}

async function joinExisting(ctx: Context, request: ClaimRequest, timeslot: TimeslotRow, startMs: number): Promise<Claim> {
  const lot = await findLot(ctx, 'a.timeslot_id = ? and a.start = ?', [timeslot.id, new Date(startMs)], [timeslot.resource_id]);
  if (!lot) throw slotTaken();
  return joinLot(ctx, request, lot, false);
}

/** How a place was given: the places taken before (holds included until removed), the capacity, the event version. */
export interface PlaceCount {
  given: boolean;
  taken: number;
  capacity: number;
  /** PostgreSQL's clock under the appointment's lock (see live/event-version.ts). */
  version: number;
}

/**
 * Outbox rows inserted by the statement that changes the place, only when
 * it did (`from a, <changed>`): capacity events get the count and the
 * version of that moment, so nothing is written after the appointment's
 * lock is taken but the COMMIT.
 */
const OUTBOX_INSERT = (changed: string, capacityLeft: string) =>
  outboxInsertFrom(`a, ${changed}`, `jsonb_build_object('capacityLeft', ${capacityLeft}, 'version', ${EVENT_VERSION_SQL})`);

/**
 * Writes that belong to the same booking and travel in the statement that
 * gives or completes its place, as CTEs after the one that writes the place:
 * each is guarded by `${PLACED}` (replaced by "the place was written"), so a
 * refused booking writes nothing, also when that statement commits at once
 * (inSqlTransaction). Foreign keys are checked at the end of the statement,
 * so a participation may name a customer written beside it.
 */
export interface WritesWithPlace {
  statements: string[];
  params: unknown[];
}
export const NO_WRITES: WritesWithPlace = { statements: [], params: [] };
/** Where a write of WritesWithPlace says "only if the place was written". */
export const PLACED = '{placed}';

/** The writes as CTEs (each followed by a comma), guarded by the rows of CTE `placed`. */
const writesAfter = (writes: WritesWithPlace, placed: string) =>
  writes.statements.map((statement, i) => `w${i} as (${statement.replaceAll(PLACED, `exists (select 1 from ${placed})`)} returning 1), `).join('');

/**
 * Gives a place in a booking-flow appointment, or not: ONE statement locks
 * the appointment row (FOR UPDATE returns its latest committed version),
 * checks it is still open and has a place left by its `places_taken` count
 * (kept by a trigger on participation for every writer), inserts the
 * participation and its outbox rows. So the row lock is held only for the
 * rest of that statement and the COMMIT, and a busy slot serialises bookings
 * at database speed. When the count says full but holds have expired, they
 * give way (spec rule 3: an expired hold keeps its place only while nobody
 * else needs it) and the place is tried once more.
 */
async function givePlace(
  ctx: Context,
  lot: LotRow,
  row: { id: string; placeholderId: string; state: string; customerId: string | null; expiresAt: Date | null; channelKey: string; locale: string | null; messages: string[] | null; clientIp?: string | null },
  options: { created: boolean; outbox: OutboxDraft[]; writes?: WritesWithPlace; insert?: SqlPart },
): Promise<PlaceCount | null> {
  const now = ctx.clock.now();
  // Written only with the place (see WritesWithPlace): sent again with a second attempt.
  const writes = options.writes ?? NO_WRITES;
  let insert = options.insert;
  // In an inSqlTransaction this is the booking's last statement: COMMIT goes with it, and the appointment's lock
  // is released the moment it ends. A refusal has written nothing (see WritesWithPlace) and commits nothing.
  const commit = Boolean(ctx.sqlTransaction);
  const attempt = async () => {
    // Sent with the first attempt only (a second one follows only on an existing appointment).
    const inserting = insert;
    insert = undefined;
    // The slot's first booking inserts its appointment here: nobody else sees the row before commit, so no lock.
    const appointment = inserting
      ? `ins as (${inserting.sql}), a as (select id, capacity, places_taken, accept_bookings from ins)`
      : // Only the primary key in the WHERE: the other conditions match the predicate of the partial gist index, and a
        // plan made on a table without statistics once read that whole index for every booking (see table-statistics.ts).
        `l as (select id, capacity, places_taken, accept_bookings, state, archived, start from appointment where id = ? for update),
       a as (select id, capacity, places_taken, accept_bookings from l where state = 'ACTIVE' and not archived and start > ?)`;
    const answer = sql<{ taken: number; capacity: number; given: number; version: string; expired_holds: boolean }>(ctx, `with ${appointment}, p as (
         insert into participation (id, crm_id, appointment_id, customer_id, reference, placeholder_id, state, expires_at, channel_key, messages, locale, client_ip, created_at, updated_at)
         select ?, ?, a.id, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?
           from a where a.places_taken < a.capacity and (a.accept_bookings or ?::boolean)
         returning id
       ), ${writesAfter(writes, 'p')}o as (${OUTBOX_INSERT('p', 'case when a.accept_bookings then greatest(a.capacity - a.places_taken - 1, 0) else 0 end')})
       select a.places_taken as taken, a.capacity, (select count(*) from p)::int as given,
              ${EVENT_VERSION_SQL} as version,
              exists (select 1 from participation h where h.appointment_id = a.id and h.state = 'RESERVED' and h.expires_at <= ?) as expired_holds
         from a`,
      [
        ...(inserting ? inserting.params : [lot.id, now]),
        row.id,
        lot.crm_id,
        row.customerId,
        row.id,
        row.placeholderId,
        row.state,
        row.expiresAt,
        row.channelKey,
        row.messages ? JSON.stringify(row.messages) : null,
        row.locale,
        row.clientIp ?? null,
        now,
        now,
        options.created,
        ...writes.params,
        draftsJson(options.outbox),
        now,
      ],
      { commit },
    );
    const [count] = await answer.catch((error: unknown) => {
      // Two first bookings of one slot: ours passed ON CONFLICT's check before the other's appointment was there, then
      // met it in the exclusion constraint, which is not the conflict's arbiter. Run again, the claim joins that
      // appointment (or, when it was a neighbour's that overlaps, finds the slot taken).
      if (inserting && (error as { constraint?: string } | null)?.constraint === 'appointment_lot_no_overlap') throw new RetryableRefusal(slotTaken(), '23P01');
      throw error;
    });
    // No row: the appointment was cancelled, archived or has begun since it was read (or, inserting, somebody made it first).
    return count ? { given: count.given > 0, taken: count.taken, capacity: count.capacity, version: Number(count.version), expiredHolds: count.expired_holds } : null;
  };
  const first = await attempt();
  if (!first && options.insert) return null;
  if (!first) throw slotTaken();
  // Refused: only when expired holds take places is there anything to release and try again.
  if (!first.given && first.expiredHolds && commit) throw new RetryInOrmTransaction('expired holds give way');
  const count = first.given || !first.expiredHolds || !(await releaseExpiredHolds(ctx, lot)) ? first : ((await attempt()) ?? first);
  // Its capacity event was written by the statement: the resource's calendar counter moves after commit.
  if (count.given) addTouchedResources(ctx.em, [lot.resource_id]);
  return count;
}

/** A place as givePlace gives it: the participation row, its outbox rows and the writes that go with it. */
export interface PlaceRequest {
  row: Parameters<typeof givePlace>[2];
  outbox: OutboxDraft[];
  writes?: WritesWithPlace;
}

/** How often a slot is claimed afresh after another first booking made its appointment between our read and our insert. */
const MAX_CLAIMS = 3;

/**
 * Claims a place (claimPlace) and gives it (givePlace); a slot's first
 * booking inserts the slot's appointment in the statement that gives its
 * place. `prepare` builds the place from the claim; when another first
 * booking of the slot committed its appointment meanwhile, the slot is
 * claimed again (joining that appointment) and the place prepared anew.
 */
export async function claimAndGive<P extends PlaceRequest>(
  ctx: Context,
  request: ClaimRequest,
  prepare: (claim: Claim) => Promise<P>,
): Promise<{ claim: Claim; count: PlaceCount; place: P }> {
  for (let attempt = 1; ; attempt++) {
    const claim = await claimPlace(ctx, request);
    // The slot's first booking may close its neighbours: the caller announces them after the place, through the ORM.
    if (ctx.sqlTransaction && claim.created && request.scope.hasBlockedTime(claim.resource)) throw new RetryInOrmTransaction('neighbours to announce');
    const place = await prepare(claim);
    const count = await givePlace(ctx, claim.lot, place.row, { created: claim.created, outbox: place.outbox, writes: place.writes, insert: claim.insert });
    if (count) return { claim, count, place };
    // Another first booking made the slot's appointment; our statement committed nothing. Claimed again in a new transaction.
    if (ctx.sqlTransaction) throw new RetryInOrmTransaction('the slot was claimed meanwhile');
    if (attempt >= MAX_CLAIMS) throw slotTaken();
  }
}

/**
 * Removes the expired holds of an appointment (whose row lock the caller
 * holds) so their places can be given; the CRM feed hears of each. Returns
 * how many went.
 */
async function releaseExpiredHolds(ctx: Context, lot: LotRow): Promise<number> {
  const gone = await sql<{ id: string; reference: string | null }>(ctx, `delete from participation where appointment_id = ? and state = 'RESERVED' and expires_at <= ? returning id, reference`,
    [lot.id, ctx.clock.now()],
  );
  for (const hold of gone) {
    announceAppointmentChange(ctx, 'HOLD_EXPIRED', { id: lot.id, reference: lot.reference, state: lot.state, crm: { id: lot.crm_id }, provider: { id: lot.provider_id } }, { id: hold.id, reference: hold.reference, state: 'RESERVED' }, 'RESERVED');
  }
  return gone.length;
}

/**
 * Completes a hold with the consumer in one statement: the participation row
 * (locked by the UPDATE itself) turns from RESERVED into BOOKED/REQUESTED,
 * with its outbox rows. The hold keeps the place it counts in
 * `places_taken`, live or expired (while nobody needed it, see givePlace).
 * `given` is false when the hold is gone (removed after expiry, or changed
 * by someone else meanwhile).
 */
export async function completeHold(
  ctx: Context,
  lot: LotRow,
  holdId: string,
  row: { state: string; customerId: string; channelKey: string; locale: string | null; messages: string[] | null },
  outbox: OutboxDraft[],
  writes: WritesWithPlace = NO_WRITES,
): Promise<PlaceCount> {
  const now = ctx.clock.now();
  const [count] = await sql<{ taken: number; capacity: number; given: number; version: string }>(ctx, `with u as (
       update participation set customer_id = ?, state = ?, expires_at = null, channel_key = ?, locale = ?, messages = ?::jsonb, updated_at = ?
        where id = ? and state = 'RESERVED' and appointment_id = ?
       returning id
     ), ${writesAfter(writes, 'u')}a as (
       select id, capacity, places_taken, accept_bookings from appointment where id = ?
     ), o as (${OUTBOX_INSERT('u', 'case when a.accept_bookings then greatest(a.capacity - a.places_taken, 0) else 0 end')})
     select a.places_taken - 1 as taken, a.capacity, (select count(*) from u)::int as given,
            ${EVENT_VERSION_SQL} as version
       from a`,
    [row.customerId, row.state, row.channelKey, row.locale, row.messages ? JSON.stringify(row.messages) : null, now, holdId, lot.id, ...writes.params, lot.id, draftsJson(outbox)],
    // In an inSqlTransaction, the last statement: COMMIT goes with it (a hold that is gone writes nothing).
    { commit: Boolean(ctx.sqlTransaction) },
  );
  const given = (count?.given ?? 0) > 0;
  if (given) addTouchedResources(ctx.em, [lot.resource_id]);
  return { given, taken: count?.taken ?? lot.capacity, capacity: count?.capacity ?? lot.capacity, version: Number(count?.version ?? 0) };
}
