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
});
