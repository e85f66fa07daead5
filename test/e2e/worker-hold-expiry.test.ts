import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '../../services/kernel/jobs.js';
import { expireHold } from '../../services/participations/hold.service.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { isolatedDatabase } from '../support/isolated-database.js';
import { apiClient } from '../support/http.js';
import { setupBookable } from '../support/booking-fixtures.js';
import { slotOf } from '../support/booking-flow.js';
import { bookSlot, type MailFixture, setupMailProvider } from '../support/mail-fixtures.js';
import { enc } from '../support/offerings-fixtures.js';
import { sql } from '../support/scheduling-fixtures.js';
import { liveChannel, TOPICS } from '../../services/kernel/jobs.js';

const HOLD_MS = 1500;

/** A hold on a slot of the fixture's timeslot, with its product. */
async function reserve(
  app: TestApp,
  f: Pick<MailFixture, 'resourceUuid' | 'timeslotUuid' | 'productUuid'>,
  slot: { from: string; to: string },
): Promise<{ participationId: string; appointmentId: string; placeholderId: string; reservedAt: number }> {
  const res = await apiClient(app.baseUrl).post(`/rest/1/resources/${enc(f.resourceUuid)}/reserve_appointment`, {
    timeslot_uuid: f.timeslotUuid,
    product_uuid: f.productUuid,
    from: slot.from,
    to: slot.to,
  });
  expect(res.status, res.text).toBe(200);
  const { uuid: participationId, appointment_uuid: appointmentId, customer_uuid: placeholderId } = res.body.participation;
  return { participationId, appointmentId, placeholderId, reservedAt: Date.now() };
}

const participationExists = async (app: TestApp, id: string): Promise<boolean> =>
  (await sql(app, 'select 1 from participation where id = ?', [id])).length > 0;

async function waitUntilGone(app: TestApp, id: string, timeoutMs: number): Promise<number> {
  const until = Date.now() + timeoutMs;
  while (await participationExists(app, id)) {
    if (Date.now() > until) throw new Error(`hold ${id} still there after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Date.now();
}

/** capacity-changed rows of the outbox about an appointment, oldest first. */
const capacityEvents = (app: TestApp, appointmentId: string) =>
  sql<{ payload: { capacityLeft: number; capacity: number }; created_at: Date }>(
    app,
    `select payload, created_at from outbox_message where topic = 'capacity-changed' and payload->>'appointmentId' = ? order by id`,
    [appointmentId],
  );

/** capacity-changed rows of the outbox about a whole timeslot written at or after `since`. */
const timeslotEventsAfter = (app: TestApp, timeslotId: string, since: Date) =>
  sql<{ payload: { scope: string; open: boolean; capacityLeft: number; appointments: { appointmentId: string }[] } }>(
    app,
    `select payload from outbox_message where topic = 'capacity-changed' and payload->>'scope' = 'timeslot' and payload->>'timeslotId' = ? and created_at >= ? order by id`,
    [timeslotId, since],
  );

/** capacity-changed rows of the outbox that announce a slot of the timeslot as a Bookable again. */
const freedSlotEvents = (app: TestApp, timeslotId: string) =>
  sql<{ payload: { scope: string; kind: string; appointmentId: null; start: string; capacity: number; capacityLeft: number } }>(
    app,
    `select payload from outbox_message where topic = 'capacity-changed' and payload->>'scope' = 'slot' and payload->>'kind' = 'models.Bookable' and payload->>'timeslotId' = ? order by id`,
    [timeslotId],
  );

describe('hold expiry by the delayed job (hold shortened to 1.5 s)', () => {
  let app: TestApp;
  let subscriber: Redis;
  const heard: { appointmentId?: string; capacityLeft?: number }[] = [];
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  beforeAll(async () => {
    db = await isolatedDatabase('hold_job');
    // The sweep is far off, so only the delayed job can remove the hold.
    app = await startTestApp({ config: { holdMs: HOLD_MS, databaseUrl: db.url }, worker: { relayPollMs: 200, sweepMs: 10 * 60_000 } });
    subscriber = new Redis(app.config.redisUrl);
    await subscriber.subscribe(liveChannel(app.config.queuePrefix, TOPICS.capacityChanged));
    subscriber.on('message', (_channel, message) => heard.push(JSON.parse(message)));
  });
  afterAll(async () => {
    subscriber?.disconnect();
    await app?.close();
    await db?.drop();
  });

  it('removes an abandoned hold within a few seconds of its expiry and announces the freed place (outbox row and pub/sub)', async () => {
    const f = await setupMailProvider(app, { capacity: 3 });
    const { participationId, appointmentId, reservedAt } = await reserve(app, f, f.slots[0]!);
    const goneAt = await waitUntilGone(app, participationId, HOLD_MS + 5000);
    expect(goneAt - reservedAt).toBeGreaterThanOrEqual(HOLD_MS - 100);
    expect(goneAt - reservedAt).toBeLessThan(HOLD_MS + 3000);

    // The appointment held nothing but this hold: it goes, and its slot is a Bookable again with all places.
    expect(await sql(app, 'select 1 from appointment where id = ?', [appointmentId])).toEqual([]);
    const events = await capacityEvents(app, appointmentId);
    expect(events.map((e) => e.payload.capacityLeft)).toEqual([2]);
    await expect.poll(() => heard.filter((e) => e.appointmentId === appointmentId).map((e) => e.capacityLeft), { timeout: 3000 }).toEqual([2]);
    // One announcement frees it: the slot as a Bookable with the timeslot's places (no timeslot-wide event).
    const freed = await freedSlotEvents(app, f.timeslotUuid);
    expect(freed.map((e) => e.payload)).toEqual([
      expect.objectContaining({ scope: 'slot', kind: 'models.Bookable', appointmentId: null, start: new Date(f.slots[0]!.from).toISOString(), capacity: 3, capacityLeft: 3 }),
    ]);
    // The query finds the timeslot-wide event its creation wrote (so its empty answer below means something) …
    expect((await timeslotEventsAfter(app, f.timeslotUuid, new Date(0))).length).toBeGreaterThan(0);
    // … and none since the hold's own event.
    expect(await timeslotEventsAfter(app, f.timeslotUuid, events.at(-1)!.created_at)).toEqual([]);
    await expect.poll(() => heard.filter((e) => e.appointmentId === null && (e as { scope?: string; timeslotId?: string }).scope === 'slot' && (e as { timeslotId?: string }).timeslotId === f.timeslotUuid).length, { timeout: 3000 }).toBe(1);
  });

  it('lets the holder still complete after the worker removed the expired hold and its appointment (spec rule 3)', async () => {
    const f = await setupMailProvider(app, { capacity: 1 });
    const slot = f.slots[3]!;
    const { participationId, appointmentId, placeholderId } = await reserve(app, f, slot);
    await waitUntilGone(app, participationId, HOLD_MS + 5000);
    expect(await sql(app, 'select 1 from appointment where id = ?', [appointmentId])).toEqual([]);
    const booked = await apiClient(app.baseUrl).post(`/resources/${enc(f.resourceUuid)}/create_appointment_with_consumer`, {
      start: slot.from,
      end: slot.to,
      timeslot_uuid: appointmentId,
      product_uuid: f.productUuid,
      placeholder_id: placeholderId,
      email: 'late@example.com',
      firstname: 'Late',
      lastname: 'Holder',
    });
    expect(booked.status, booked.text).toBe(201);
    expect(booked.body.createdAppointment).toMatchObject({ timeslot_uuid: f.timeslotUuid, capacity: 1, capacity_left: 0 });
  });

  it('keeps the appointment when it holds other places: only the expired hold goes', async () => {
    const f = await setupMailProvider(app, { capacity: 3 });
    const appointmentId: string = (await bookSlot(app, f, 2)).created.appointment_uuid;
    const res = await apiClient(app.baseUrl).post(`/rest/1/resources/${enc(f.resourceUuid)}/reserve_appointment`, {
      appointment_uuid: appointmentId,
      product_uuid: f.productUuid,
      from: f.slots[2]!.from,
      to: f.slots[2]!.to,
    });
    expect(res.status, res.text).toBe(200);
    await waitUntilGone(app, res.body.participation.uuid, HOLD_MS + 5000);
    expect(await sql(app, 'select 1 from appointment where id = ?', [appointmentId])).toHaveLength(1);
    expect((await capacityEvents(app, appointmentId)).at(-1)!.payload.capacityLeft).toBe(2);
  });

  it('keeps a hold that was completed in time (the job re-checks the state)', async () => {
    const f = await setupMailProvider(app, { capacity: 3 });
    const { participationId } = await bookSlot(app, f, 1);
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS + 1500));
    const [row] = await sql<{ state: string; expires_at: Date | null }>(app, 'select state, expires_at from participation where id = ?', [participationId]);
    expect(row).toMatchObject({ state: 'BOOKED', expires_at: null });
  });

  it('tells the CRM feed HOLD_EXPIRED once, and announces the neighbours where products keep lead or follow-up time', async () => {
    const feed = (participationId: string) =>
      sql<{ payload: Record<string, unknown> }>(app, `select payload from outbox_message where topic = 'appointment-changed' and payload->>'change' = 'HOLD_EXPIRED' and payload->>'participationUuid' = ?`, [
        participationId,
      ]);
    // The last hold of a slot, no blocked time: the plain-statement path.
    const plain = await setupMailProvider(app, { capacity: 1 });
    const first = await reserve(app, plain, plain.slots[1]!);
    await waitUntilGone(app, first.participationId, HOLD_MS + 5000);
    expect((await feed(first.participationId)).map((row) => row.payload)).toEqual([
      expect.objectContaining({ appointmentUuid: first.appointmentId, appointmentState: 'ACTIVE', state: null, previousState: 'RESERVED', crmId: plain.crmId }),
    ]);

    // A product with lead and follow-up time: freeing the slot may open its neighbours, so the timeslot is announced too.
    const blocked = await setupBookable(app, { capacity: 1, slots: 4, product: { leadTimeMinutes: 30, followUpTimeMinutes: 30 } });
    const { participationId, appointmentId } = await reserve(app, blocked, slotOf(blocked, 1));
    // After the reserve's own announcements (written before it answered), before the expiry's.
    const since = new Date();
    await waitUntilGone(app, participationId, HOLD_MS + 5000);
    expect(await sql(app, 'select 1 from appointment where id = ?', [appointmentId])).toEqual([]);
    await expect.poll(async () => (await feed(participationId)).length, { timeout: 3000 }).toBe(1);
    await expect.poll(async () => (await timeslotEventsAfter(app, blocked.timeslotUuid, since)).length, { timeout: 3000 }).toBeGreaterThan(0);
  });

  it('expireHold is safe to run again: not due yet, removed, then gone', async () => {
    const f = await setupMailProvider(app, { capacity: 3 });
    // Reserve through the service's own clock: the test clock runs 10 minutes behind, so the job finds it not due.
    const { participationId } = await reserve(app, f, f.slots[2]!);
    app.clock.advance(-10 * 60_000);
    try {
      const early = await expireHold(app.context(), participationId);
      expect(early).toEqual({ notDueForMs: expect.any(Number) });
    } finally {
      app.clock.reset();
    }
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    const outcomes = [await expireHold(app.context(), participationId), await expireHold(app.context(), participationId)];
    expect(outcomes.filter((o) => o === 'removed').length).toBeLessThanOrEqual(1);
    expect(outcomes[1]).toBe('gone');
    expect(await participationExists(app, participationId)).toBe(false);
  });
});

describe('the periodic sweep catches a hold whose job was lost', () => {
  let app: TestApp;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  beforeAll(async () => {
    db = await isolatedDatabase('hold_sweep');
    app = await startTestApp({ config: { holdMs: HOLD_MS, databaseUrl: db.url }, worker: { relayPollMs: 200, sweepMs: 500 } });
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('removes the hold and announces the place although its BullMQ job is gone', async () => {
    const f = await setupMailProvider(app, { capacity: 2 });
    const { participationId, appointmentId } = await reserve(app, f, f.slots[0]!);
    // Wait until the relay queued the expiry job, then lose it (as if Redis lost its data).
    const connection = new Redis(app.config.redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUES.holdExpiry, { connection, prefix: app.config.queuePrefix });
    try {
      await expect.poll(async () => Boolean(await queue.getJob(`hold-${participationId}`)), { timeout: 5000 }).toBe(true);
      await queue.remove(`hold-${participationId}`);
      expect(await queue.getJob(`hold-${participationId}`)).toBeUndefined();
    } finally {
      await queue.close();
      connection.disconnect();
    }
    await waitUntilGone(app, participationId, HOLD_MS + 4000);
    const events = await capacityEvents(app, appointmentId);
    expect(events.at(-1)!.payload.capacityLeft).toBe(1);
    expect((await freedSlotEvents(app, f.timeslotUuid)).map((e) => e.payload.capacityLeft)).toEqual([2]);
  });
});
