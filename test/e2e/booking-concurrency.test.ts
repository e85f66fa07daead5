import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BookingFixture, setupBookable } from '../support/booking-fixtures.js';
import { consumerBody, publicClient } from '../support/booking-flow.js';
import { type ChildGateway, startChildGateway } from '../support/child-gateway.js';
import { TEST_DATABASE_URL } from '../support/env.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { type ApiClient, type HttpResult, unique } from '../support/http.js';

/**
 * Issue 5, item 9: many consumers at once on one slot, spread over two
 * gateway processes (this test process and a child process started from
 * schema/gateway.ts), never overbook. Both processes use the real clock.
 */
const SLOT_TAKEN = { 'api-info': { version: '1' }, errors: [{ errorCode: '201', message: 'Das überlappt mit einem anderen Termin.' }] };
const REQUESTS = 60;
const ROUNDS = 3;

describe('booking flow: no overbooking under concurrency across two gateway processes', () => {
  let app: TestApp;
  let child: ChildGateway;
  let gateways: ApiClient[];
  let db: pg.Client;

  beforeAll(async () => {
    app = await startTestApp();
    child = await startChildGateway();
    gateways = [app.anonymous, publicClient(child.baseUrl)];
    db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await db.connect();
  }, 90_000);
  afterAll(async () => {
    await db?.end();
    await child?.stop();
    await app?.close();
  });

  /** Places taken in the fixture's first slot right now: booked, requested and unexpired holds. */
  async function livePlaces(f: BookingFixture): Promise<number> {
    const { rows } = await db.query<{ n: string }>(
      `select count(*) as n from participation p join appointment a on a.id = p.appointment_id
        where a.timeslot_id = $1 and a.start = $2 and (p.state in ('REQUESTED', 'BOOKED') or (p.state = 'RESERVED' and p.expires_at > now()))`,
      [f.timeslotUuid, f.slot.from],
    );
    return Number(rows[0]!.n);
  }

  async function appointmentsInSlot(f: BookingFixture): Promise<string[]> {
    const { rows } = await db.query<{ id: string }>('select id from appointment where timeslot_id = $1 and start = $2', [f.timeslotUuid, f.slot.from]);
    return rows.map((row) => row.id);
  }

  /**
   * Fires all requests at once (request i on gateway i mod 2) while a
   * separate connection watches the slot; returns the answers and the most
   * places the database ever showed taken.
   */
  async function storm(f: BookingFixture, requests: ((client: ApiClient) => Promise<HttpResult>)[]) {
    let watching = true;
    let maxSeen = 0;
    const watcher = (async () => {
      while (watching) maxSeen = Math.max(maxSeen, await livePlaces(f));
    })();
    const answers = await Promise.all(requests.map((send, i) => send(gateways[i % 2]!).then((res) => ({ ...res, gateway: i % 2 }))));
    watching = false;
    await watcher;
    maxSeen = Math.max(maxSeen, await livePlaces(f));
    return { answers, maxSeen };
  }

  function expectCleanRefusals(answers: (HttpResult & { gateway: number })[], successStatus: number, successes: number) {
    const statuses = answers.map((a) => a.status);
    const odd = answers.filter((a) => a.status !== successStatus && a.status !== 412);
    expect(odd.map((a) => a.status), `${statuses.join(',')} ${odd[0]?.text ?? ''}`).toEqual([]);
    expect(statuses.filter((s) => s === successStatus)).toHaveLength(successes);
    const refused = answers.filter((a) => a.status !== successStatus);
    expect(refused).toHaveLength(answers.length - successes);
    for (const answer of refused) {
      expect(answer.status, answer.text).toBe(412);
      expect(answer.body).toEqual(SLOT_TAKEN);
    }
    // Both processes really took part.
    expect(new Set(answers.map((a) => a.gateway))).toEqual(new Set([0, 1]));
  }

  /** The fixture's i-th slot of `raster` minutes after its first one. */
  const nthSlot = (f: BookingFixture, i: number, raster: number) => {
    const from = new Date(Date.parse(f.slot.from) + i * raster * 60_000);
    return { from: from.toISOString(), to: new Date(from.getTime() + raster * 60_000).toISOString() };
  };
  const bookRequest = (f: BookingFixture, body: Record<string, unknown> = {}) => (client: ApiClient) =>
    client.post(`/resources/${f.resourceUuid}/create_appointment_with_consumer`, consumerBody(f, { email: `${unique('storm')}@example.com`, ...body }));
  const reserveRequest = (f: BookingFixture, body: Record<string, unknown> = {}) => (client: ApiClient) =>
    client.post(`/rest/1/resources/${f.resourceUuid}/reserve_appointment`, {
      timeslot_uuid: f.timeslotUuid,
      product_uuid: f.productUuid,
      from: f.slot.from,
      to: f.slot.to,
      ...body,
    });

  it(`${REQUESTS} concurrent consumer bookings (no hold) at a capacity-5 slot: 5 booked, the rest 412`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const f = await setupBookable(app, { capacity: 5 });
      const { answers, maxSeen } = await storm(f, Array.from({ length: REQUESTS }, () => bookRequest(f)));
      expectCleanRefusals(answers, 201, 5);
      expect(maxSeen).toBeLessThanOrEqual(5);
      expect(await livePlaces(f)).toBe(5);
      const appointments = await appointmentsInSlot(f);
      expect(appointments).toHaveLength(1);
      const booked = answers.filter((a) => a.status === 201);
      expect(new Set(booked.map((a) => a.body.createdAppointment.appointment_uuid))).toEqual(new Set(appointments));
      expect(booked.map((a) => a.body.createdAppointment.capacity_left).sort()).toEqual([0, 1, 2, 3, 4]);
    }
  }, 120_000);

  it(`${REQUESTS} concurrent reservations at a capacity-3 slot: 3 holds, the rest 412`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const f = await setupBookable(app, { capacity: 3 });
      const { answers, maxSeen } = await storm(f, Array.from({ length: REQUESTS }, () => reserveRequest(f)));
      expectCleanRefusals(answers, 200, 3);
      expect(maxSeen).toBeLessThanOrEqual(3);
      expect(await livePlaces(f)).toBe(3);
      expect(await appointmentsInSlot(f)).toHaveLength(1);
      const held = answers.filter((a) => a.status === 200);
      expect(held.map((a) => a.body.participation.appointment_capacity_left).sort()).toEqual([0, 1, 2]);
    }
  }, 120_000);

  it('a mixed storm on an existing appointment (holds by timeslot and appointment UUID, bookings, hold completions) never exceeds capacity 4', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const f = await setupBookable(app, { capacity: 4 });
      const first = await reserveRequest(f)(gateways[0]!);
      expect(first.status).toBe(200);
      const appointmentUuid = first.body.participation.appointment_uuid;
      const requests = Array.from({ length: REQUESTS }, (_, i) => {
        switch (i % 4) {
          case 0:
            return reserveRequest(f);
          case 1:
            return reserveRequest(f, { timeslot_uuid: null, appointment_uuid: appointmentUuid });
          case 2:
            return bookRequest(f, { timeslot_uuid: appointmentUuid });
          default:
            return bookRequest(f);
        }
      });
      // The first holder completes its own hold in the middle of the storm: its place stays its own.
      requests[REQUESTS / 2] = bookRequest(f, { placeholder_id: first.body.participation.customer_uuid });
      const { answers, maxSeen } = await storm(f, requests);
      const succeeded = answers.filter((a) => a.status === 200 || a.status === 201);
      const odd = answers.filter((a) => ![200, 201, 412].includes(a.status));
      expect(odd.map((a) => a.status), odd[0]?.text).toEqual([]);
      expect(answers[REQUESTS / 2]!.status).toBe(201);
      expect(succeeded).toHaveLength(3 + 1);
      for (const answer of answers.filter((a) => a.status !== 200 && a.status !== 201)) expect(answer.body).toEqual(SLOT_TAKEN);
      expect(maxSeen).toBeLessThanOrEqual(4);
      expect(await livePlaces(f)).toBe(4);
      expect(await appointmentsInSlot(f)).toEqual([appointmentUuid]);
    }
  }, 120_000);

  it('200 concurrent consumer bookings at a capacity-100 slot: exactly 100 booked, the rest 412', async () => {
    const f = await setupBookable(app, { capacity: 100 });
    const { answers, maxSeen } = await storm(f, Array.from({ length: 200 }, () => bookRequest(f)));
    expectCleanRefusals(answers, 201, 100);
    expect(maxSeen).toBeLessThanOrEqual(100);
    expect(await livePlaces(f)).toBe(100);
    expect(await appointmentsInSlot(f)).toHaveLength(1);
    const left = answers.filter((a) => a.status === 201).map((a) => a.body.createdAppointment.capacity_left as number);
    expect(left.sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
  }, 120_000);

  it('capacity 1: each of 40 clients books its own slot while 20 more race for one of them; every slot ends with exactly one booking', async () => {
    const f = await setupBookable(app, { capacity: 1, raster: 15, slots: 40 });
    const slotAt = (i: number) => {
      const from = new Date(Date.parse(f.slot.from) + i * 15 * 60_000);
      return { start: from.toISOString(), end: new Date(from.getTime() + 15 * 60_000).toISOString() };
    };
    const requests = [
      ...Array.from({ length: 40 }, (_, i) => bookRequest(f, slotAt(i))),
      ...Array.from({ length: 20 }, () => bookRequest(f, slotAt(7))),
    ];
    const answers = await Promise.all(requests.map((send, i) => send(gateways[i % 2]!)));
    const odd = answers.filter((a) => a.status !== 201 && a.status !== 412);
    expect(odd.map((a) => a.status), odd[0]?.text).toEqual([]);
    expect(answers.filter((a) => a.status === 201)).toHaveLength(40);
    const { rows } = await db.query<{ start: Date; n: string }>(
      `select a.start, count(p.id) as n from appointment a join participation p on p.appointment_id = a.id
        where a.timeslot_id = $1 and p.state = 'BOOKED' group by a.start`,
      [f.timeslotUuid],
    );
    expect(rows).toHaveLength(40);
    expect(rows.every((row) => Number(row.n) === 1)).toBe(true);
  }, 120_000);

  it('two first bookings of each of 30 fresh slots (capacity 2) at once: both get a place in one appointment, through holds and bookings', async () => {
    const f = await setupBookable(app, { capacity: 2, raster: 15, slots: 30 });
    const slotAt = (i: number) => nthSlot(f, i, 15);
    // The loser of each race to insert the slot's appointment joins the winner's instead of being refused.
    const requests = Array.from({ length: 30 }, (_, i) => {
      const { from, to } = slotAt(i);
      return i % 2 === 0 ? [reserveRequest(f, { from, to }), reserveRequest(f, { from, to })] : [bookRequest(f, { start: from, end: to }), bookRequest(f, { start: from, end: to })];
    }).flat();
    const answers = await Promise.all(requests.map((send, i) => send(gateways[i % 2]!)));
    expect(answers.filter((a) => a.status >= 300).map((a) => `${a.status} ${a.text}`)).toEqual([]);
    const { rows } = await db.query<{ n: string; places: string }>(
      `select count(distinct a.id) as n, count(p.id) as places from appointment a join participation p on p.appointment_id = a.id where a.timeslot_id = $1 group by a.start`,
      [f.timeslotUuid],
    );
    expect(rows).toHaveLength(30);
    expect(rows.every((row) => Number(row.n) === 1 && Number(row.places) === 2)).toBe(true);
  }, 120_000);

  it('one new e-mail booking 30 slots at once (half completing holds) becomes exactly one user and one customer', async () => {
    const f = await setupBookable(app, { capacity: 1, raster: 15, slots: 30 });
    const slotAt = (i: number) => nthSlot(f, i, 15);
    const email = `${unique('same')}@example.com`;
    // Holds first (their own e-mail-less step), then every booking with the one e-mail at once on both gateways.
    const holds = await Promise.all(Array.from({ length: 15 }, (_, i) => reserveRequest(f, slotAt(i))(gateways[i % 2]!)));
    expect(holds.map((h) => h.status)).toEqual(Array(15).fill(200));
    const requests = Array.from({ length: 30 }, (_, i) => {
      const { from, to } = slotAt(i);
      const hold = holds[i]?.body.participation.customer_uuid;
      return bookRequest(f, { start: from, end: to, email, ...(hold ? { placeholder_id: hold } : {}) });
    });
    const answers = await Promise.all(requests.map((send, i) => send(gateways[i % 2]!)));
    expect(answers.map((a) => a.status), answers.find((a) => a.status !== 201)?.text).toEqual(Array(30).fill(201));
    const users = await db.query('select id from app_user where email = $1', [email]);
    const customers = await db.query('select id, user_id from customer where email = $1', [email]);
    expect(users.rows).toHaveLength(1);
    expect(customers.rows).toEqual([{ id: expect.any(String), user_id: users.rows[0].id }]);
    const booked = await db.query(
      `select count(*)::int as n from participation p join appointment a on a.id = p.appointment_id where a.timeslot_id = $1 and p.state = 'BOOKED' and p.customer_id = $2`,
      [f.timeslotUuid, customers.rows[0].id],
    );
    expect(booked.rows[0].n).toBe(30);
  }, 120_000);

  it('one new mobile booking 20 slots at once under 20 different e-mails becomes exactly one user, whom every booking belongs to', async () => {
    const f = await setupBookable(app, { capacity: 1, raster: 15, slots: 20 });
    const mobile = `+49175${String(Date.now()).slice(-7)}`;
    const emails = Array.from({ length: 20 }, () => `${unique('num')}@example.com`);
    // Completions of holds: first bookings of slots of one timeslot would wait for each other on the timeslot's row.
    const holds = await Promise.all(emails.map((_, i) => reserveRequest(f, nthSlot(f, i, 15))(gateways[i % 2]!)));
    expect(holds.map((h) => h.status)).toEqual(Array(20).fill(200));
    const requests = emails.map((email, i) => {
      const { from, to } = nthSlot(f, i, 15);
      return bookRequest(f, { start: from, end: to, email, mobile, placeholder_id: holds[i]!.body.participation.customer_uuid });
    });
    const answers = await Promise.all(requests.map((send, i) => send(gateways[i % 2]!)));
    expect(answers.map((a) => a.status), answers.find((a) => a.status !== 201)?.text).toEqual(Array(20).fill(201));
    // The first to take the locks made the user; every other found it by its mobile (spec: e-mail or mobile).
    const users = await db.query('select id, email from app_user where mobile = $1', [mobile]);
    expect(users.rows).toHaveLength(1);
    expect(emails).toContain(users.rows[0].email);
    const owners = await db.query(
      `select distinct c.user_id from participation p join appointment a on a.id = p.appointment_id join customer c on c.id = p.customer_id where a.timeslot_id = $1 and p.state = 'BOOKED'`,
      [f.timeslotUuid],
    );
    expect(owners.rows).toEqual([{ user_id: users.rows[0].id }]);
  }, 120_000);

  it('bookings with a user’s e-mail and bookings that find that user by mobile, all at once, give it exactly one customer', async () => {
    const f = await setupBookable(app, { capacity: 1, raster: 15, slots: 16 });
    const mobile = `+49176${String(Date.now()).slice(-7)}`;
    const email = `${unique('known')}@example.com`;
    expect((await f.api.post(`/crms/${f.crmId}/user`, { reference: `k-${unique()}@test`, email, username: unique('k'), lastName: 'Known', mobile })).status).toBe(201);
    const holds = await Promise.all(Array.from({ length: 16 }, (_, i) => reserveRequest(f, nthSlot(f, i, 15))(gateways[i % 2]!)));
    expect(holds.map((h) => h.status)).toEqual(Array(16).fill(200));
    // Half with the user's own e-mail, half with e-mails of their own and the user's mobile.
    const requests = holds.map((hold, i) => {
      const { from, to } = nthSlot(f, i, 15);
      const who = i % 2 ? { email, mobile: '' } : { email: `${unique('other')}@example.com`, mobile };
      return bookRequest(f, { start: from, end: to, ...who, mobile: who.mobile || undefined, placeholder_id: hold.body.participation.customer_uuid });
    });
    const answers = await Promise.all(requests.map((send, i) => send(gateways[i % 2]!)));
    expect(answers.map((a) => a.status), answers.find((a) => a.status !== 201)?.text).toEqual(Array(16).fill(201));
    const customers = await db.query('select c.id from customer c join app_user u on u.id = c.user_id where u.email = $1', [email]);
    expect(customers.rows).toHaveLength(1);
  }, 120_000);

  it('lead and follow-up time: concurrent first bookings of neighbouring slots never leave two blocked periods overlapping', async () => {
    // Raster 30 with 15 minutes lead and 15 follow-up: a booked slot blocks its neighbours on both sides.
    for (let round = 0; round < ROUNDS; round++) {
      const f = await setupBookable(app, { capacity: 1, raster: 30, slots: 8, product: { leadTimeMinutes: 15, followUpTimeMinutes: 15 } });
      const slotAt = (i: number) => {
        const from = new Date(Date.parse(f.slot.from) + i * 30 * 60_000);
        return { start: from.toISOString(), end: new Date(from.getTime() + 30 * 60_000).toISOString() };
      };
      // Slot 0 and 7 cannot keep their lead/follow-up time inside the timeslot; 1–6 compete pairwise.
      const requests = Array.from({ length: 48 }, (_, i) => bookRequest(f, slotAt(1 + (i % 6))));
      const answers = await Promise.all(requests.map((send, i) => send(gateways[i % 2]!)));
      const odd = answers.filter((a) => a.status !== 201 && a.status !== 412);
      expect(odd.map((a) => a.status), odd[0]?.text).toEqual([]);
      const { rows: overlapping } = await db.query(
        `select 1 from appointment a join appointment b on a.resource_id = b.resource_id and a.id < b.id
          where a.timeslot_id = $1 and b.timeslot_id = $1 and a.state = 'ACTIVE' and b.state = 'ACTIVE'
            and tstzrange(a.blocked_from, a.blocked_to) && tstzrange(b.blocked_from, b.blocked_to)`,
        [f.timeslotUuid],
      );
      expect(overlapping).toEqual([]);
      const { rows } = await db.query<{ n: string }>(`select count(*) as n from appointment where timeslot_id = $1`, [f.timeslotUuid]);
      // Every other slot at most: 3 of the 6.
      expect(Number(rows[0]!.n)).toBeGreaterThanOrEqual(1);
      expect(Number(rows[0]!.n)).toBeLessThanOrEqual(3);
      expect(answers.filter((a) => a.status === 201)).toHaveLength(Number(rows[0]!.n));
    }
  }, 120_000);

  it('every appointment’s places_taken (kept by a trigger for every writer) equals its RESERVED, REQUESTED and BOOKED participations', async () => {
    const { rows } = await db.query(
      `select a.id, a.places_taken, (select count(*) from participation p where p.appointment_id = a.id and p.state in ('RESERVED', 'REQUESTED', 'BOOKED'))::int as counted
         from appointment a
        where a.places_taken <> (select count(*) from participation p where p.appointment_id = a.id and p.state in ('RESERVED', 'REQUESTED', 'BOOKED'))`,
    );
    expect(rows).toEqual([]);
    expect((await db.query(`select count(*)::int as n from appointment where places_taken > 0`)).rows[0].n).toBeGreaterThan(0);
  });
});
