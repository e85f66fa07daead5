import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metrics } from '../../services/kernel/metrics.js';
import { setupBookable } from '../support/booking-fixtures.js';
import { addResource, consumerBody, providerPath, sql } from '../support/booking-flow.js';
import { TEST_DATABASE_URL } from '../support/env.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { enc } from '../support/offerings-fixtures.js';
import { eventually } from '../support/webhook-receiver.js';

/** Races the service's own checks cannot close alone; PostgreSQL decides them (constraint, row lock). */
describe('races closed at the database', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.close());

  const day = (offsetDays: number) => new Date(app.clock.now().getTime() + offsetDays * 86_400_000).toISOString().slice(0, 10);

  it('parallel creates of overlapping timeslots of one resource: exactly one wins, the others are 409 (exclusion constraint)', async () => {
    const f = await setupBookable(app);
    for (let round = 0; round < 5; round++) {
      const resource = await addResource(f);
      const date = day(20 + round);
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          f.api.post(`${providerPath(f)}/timeslots`, {
            timeslots: [{ resourceReference: resource.ref, start: `${date}T0${i % 3}:00`, end: `${date}T0${(i % 3) + 4}:00`, raster: 60, defaultCapacity: 1, defaultAcceptBookings: true, state: 'BOOKABLE' }],
          }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
      for (const refused of results.filter((r) => r.status === 409)) expect(refused.body.errors[0].errorCode).toBe('CONFLICT');
      const rows = await sql(app, 'select 1 from timeslot where resource_id = ?', [resource.uuid]);
      expect(rows).toHaveLength(1);
    }
  });

  it('parallel updates that would make two timeslots overlap: at most one commits', async () => {
    const f = await setupBookable(app);
    const resource = await addResource(f);
    const date = day(30);
    const create = await f.api.post(`${providerPath(f)}/timeslots`, {
      timeslots: [
        { reference: `a-${resource.ref}`, resourceReference: resource.ref, start: `${date}T08:00`, end: `${date}T09:00`, raster: 60, defaultCapacity: 1, defaultAcceptBookings: true, state: 'BOOKABLE' },
        { reference: `b-${resource.ref}`, resourceReference: resource.ref, start: `${date}T12:00`, end: `${date}T13:00`, raster: 60, defaultCapacity: 1, defaultAcceptBookings: true, state: 'BOOKABLE' },
      ],
    });
    expect(create.status, create.text).toBe(201);
    const [a, b] = await Promise.all([
      f.api.put(`${providerPath(f)}/timeslots/${enc(`a-${resource.ref}`)}`, { end: `${date}T11:00` }),
      f.api.put(`${providerPath(f)}/timeslots/${enc(`b-${resource.ref}`)}`, { start: `${date}T10:00` }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const overlapping = await sql(
      app,
      `select 1 from timeslot x join timeslot y on x.resource_id = y.resource_id and x.id < y.id and tstzrange(x.start, x."end") && tstzrange(y.start, y."end") where x.resource_id = ?`,
      [resource.uuid],
    );
    expect(overlapping).toEqual([]);
  });

  it('a first booking racing a timeslot update never leaves an appointment off the grid', async () => {
    for (let round = 0; round < 6; round++) {
      const f = await setupBookable(app, { raster: 30, slots: 4, startInDays: 10 + round });
      const timeslotRef = (await sql<{ reference: string }>(app, 'select reference from timeslot where id = ?', [f.timeslotUuid]))[0]!.reference;
      const [reserve, update] = await Promise.all([
        app.anonymous.post(`/rest/1/resources/${enc(f.resourceUuid)}/reserve_appointment`, { timeslot_uuid: f.timeslotUuid, product_uuid: f.productUuid, ...f.slot }),
        f.api.put(`${providerPath(f)}/timeslots/${enc(timeslotRef)}`, { raster: 45 }),
      ]);
      // Either the booking came first (the update then sees its appointment: 409), or the update did (the 30-minute slot no longer exists: refused).
      expect([reserve.status, update.status]).toSatisfy(([r, u]: number[]) => (r === 200 && u === 409) || (u === 200 && r >= 400 && r < 500));
      const offGrid = await sql(
        app,
        `select a.id from appointment a join timeslot t on t.id = a.timeslot_id
          where t.id = ? and a.state = 'ACTIVE'
            and (mod((extract(epoch from a.start - t.start) / 60)::int, t.raster) <> 0 or (extract(epoch from a."end" - a.start) / 60)::int <> t.raster)`,
        [f.timeslotUuid],
      );
      expect(offGrid).toEqual([]);
    }
  });

  it('a first booking racing a timeslot delete never leaves an orphaned appointment', async () => {
    for (let round = 0; round < 6; round++) {
      const f = await setupBookable(app, { startInDays: 20 + round });
      const timeslotRef = (await sql<{ reference: string }>(app, 'select reference from timeslot where id = ?', [f.timeslotUuid]))[0]!.reference;
      const [reserve, removal] = await Promise.all([
        app.anonymous.post(`/rest/1/resources/${enc(f.resourceUuid)}/reserve_appointment`, { timeslot_uuid: f.timeslotUuid, product_uuid: f.productUuid, ...f.slot }),
        f.api.delete(`${providerPath(f)}/timeslots/${enc(timeslotRef)}`),
      ]);
      expect([reserve.status, removal.status]).toSatisfy(([r, d]: number[]) => (r === 200 && d === 409) || (d === 204 && r >= 400 && r < 500));
      const orphans = await sql(app, `select id from appointment where resource_id = ? and timeslot_id is null`, [f.resourceUuid]);
      expect(orphans).toEqual([]);
      const timeslots = await sql(app, 'select 1 from timeslot where id = ?', [f.timeslotUuid]);
      const holds = await sql(app, `select 1 from participation p join appointment a on a.id = p.appointment_id where a.resource_id = ?`, [f.resourceUuid]);
      expect(holds.length).toBe(timeslots.length === 1 && reserve.status === 200 ? 1 : 0);
    }
  });

  it('a first booking whose appointment meets one committed meanwhile in the exclusion constraint runs again on a fresh read', async () => {
    const f = await setupBookable(app, { capacity: 2, raster: 30, slots: 4, startInDays: 40 });
    const booked = await app.anonymous.post(`/resources/${f.resourceUuid}/create_appointment_with_consumer`, consumerBody(f));
    expect(booked.status, booked.text).toBe(201);
    // Another transaction inserts an appointment over the third slot (10:05–10:35) and does not commit yet: the
    // booking's read cannot see it, and its insert waits for it in the exclusion constraint.
    const third = { start: new Date(Date.parse(f.slot.from) + 60 * 60_000).toISOString(), end: new Date(Date.parse(f.slot.from) + 90 * 60_000).toISOString() };
    const other = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await other.connect();
    const retries = async () => (await metrics.transactionRetries.get()).values.find((v) => v.labels.code === '23P01')?.value ?? 0;
    const before = await retries();
    try {
      await other.query('begin');
      await other.query(
        `insert into appointment (id, crm_id, provider_id, resource_id, product_id, timeslot_id, reference, start, "end", capacity, accept_bookings, archived, state, created_at)
         select gen_random_uuid(), crm_id, provider_id, resource_id, product_id, timeslot_id, 'raced-' || id, $2::timestamptz + interval '5 minutes', $3::timestamptz + interval '5 minutes',
                capacity, accept_bookings, false, 'ACTIVE', now()
           from appointment where timeslot_id = $1 limit 1`,
        [f.timeslotUuid, third.start, third.end],
      );
      const otherPid = (await other.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const booking = app.anonymous.post(`/resources/${f.resourceUuid}/create_appointment_with_consumer`, consumerBody(f, third));
      // Until a session waits for that transaction (not any lock wait of the cluster: other test files run beside this one).
      await eventually(
        async () =>
          (await sql<{ n: number }>(app, `select count(*)::int as n from pg_locks w join pg_locks h on h.locktype = 'transactionid' and h.transactionid = w.transactionid and h.granted
              where not w.granted and h.pid = ?`, [otherPid]))[0]!.n > 0,
        10_000,
        'the booking to wait for the overlapping insert',
      );
      await other.query('commit');
      const answer = await booking;
      // Run again, the claim reads the appointment that now blocks the slot and refuses it as taken (not a 500, no second appointment).
      expect(answer.status, answer.text).toBe(412);
      expect(answer.body.errors[0].errorCode).toBe('201');
      expect(await retries()).toBe(before + 1);
      const overlapping = await sql(app, `select id from appointment where timeslot_id = ? and start < ? and "end" > ?`, [f.timeslotUuid, third.end, third.start]);
      expect(overlapping).toHaveLength(1);
    } finally {
      await other.end();
    }
  });
});
