import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupBookable, type BookingFixture } from '../support/booking-fixtures.js';
import { consumerBody, slotOf } from '../support/booking-flow.js';
import { TEST_DATABASE_URL } from '../support/env.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { enc } from '../support/offerings-fixtures.js';
import { type PostgresProcess, postgresBinDir, startPostgresProcess } from '../support/postgres-process.js';

const binDir = postgresBinDir();
if (!binDir) console.warn('fault-postgres-restart: skipped, no PostgreSQL server binaries (initdb) found; install postgresql to run it');

/**
 * PostgreSQL restarts during a burst of bookings (a private server of this
 * test, never the shared one): requests fail with 503 while it is down,
 * never 500; every booking that was answered 201 is in the database
 * afterwards; and the same gateway process books again once PostgreSQL is
 * back, without a restart of its own.
 */
describe.skipIf(!binDir)('PostgreSQL restart during a burst of bookings', () => {
  let server: PostgresProcess;
  let app: TestApp;
  let f: BookingFixture;

  beforeAll(async () => {
    server = await startPostgresProcess(binDir!);
    const name = `${new URL(TEST_DATABASE_URL).pathname.slice(1)}_restart`;
    app = await startTestApp({ config: { databaseUrl: server.urlOf(name) } });
    f = await setupBookable(app, { slots: 16, capacity: 50 });
  }, 120_000);
  afterAll(async () => {
    await app?.close().catch(() => undefined);
    await server?.destroy();
  });

  it('answers 503 while PostgreSQL is down, loses nothing committed, and recovers by itself', async () => {
    const results: { status: number; email: string; code?: string; phase: string }[] = [];
    let phase = 'up';
    let stop = false;
    let n = 0;
    const client = async () => {
      while (!stop) {
        const i = n++;
        const startedIn = phase;
        const email = `burst${i}@example.com`;
        const { from, to } = slotOf(f, i % 16);
        const res = await app.anonymous
          .post(`/resources/${enc(f.resourceUuid)}/create_appointment_with_consumer`, consumerBody(f, { start: from, end: to, email }))
          .catch(() => ({ status: 0, body: undefined }));
        // Only a request sent and answered while PostgreSQL was down counts as "down".
        results.push({ status: res.status, email, code: res.body?.errors?.[0]?.errorCode, phase: startedIn === phase ? phase : `${startedIn}→${phase}` });
      }
    };
    const clients = Array.from({ length: 4 }, client);
    const waitFor = async (predicate: () => boolean, ms: number, what: string) => {
      const until = Date.now() + ms;
      while (!predicate()) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };

    await waitFor(() => results.filter((r) => r.status === 201).length >= 10, 30_000, '10 bookings before the restart');
    phase = 'stopping';
    await server.stop('fast');
    phase = 'down';
    const downFrom = results.length;
    await waitFor(() => results.slice(downFrom).filter((r) => r.phase === 'down').length >= 12, 30_000, 'requests while PostgreSQL is down');
    phase = 'starting';
    await server.start();
    phase = 'back';
    const backFrom = results.length;
    await waitFor(() => results.slice(backFrom).some((r) => r.status === 201), 30_000, 'a booking after PostgreSQL is back');
    stop = true;
    await Promise.all(clients);

    // Never a 500; while it was down, 503 with the usual error body.
    expect(results.filter((r) => r.status >= 500 && r.status !== 503)).toEqual([]);
    expect(results.filter((r) => r.status === 0)).toEqual([]);
    const down = results.filter((r) => r.phase === 'down');
    expect(down.length).toBeGreaterThanOrEqual(12);
    expect(down.filter((r) => !(r.status === 503 && r.code === 'UNAVAILABLE'))).toEqual([]);
    // Everything answered 201 is there, once.
    const booked = results.filter((r) => r.status === 201).map((r) => r.email).sort();
    const rows = await app.orm.em.fork().getConnection().execute<{ email: string }[]>(
      `select c.email from participation p join customer c on c.id = p.customer_id join appointment a on a.id = p.appointment_id
        where a.resource_id = ? and p.state = 'BOOKED' order by c.email`,
      [f.resourceUuid],
    );
    expect(rows.map((r) => r.email).filter((email) => booked.includes(email))).toEqual(booked);
    // The gateway answers normally again.
    expect((await app.anonymous.get(`/resources/${enc(f.resourceUuid)}/upcoming_bookables`, { 'cache-control': 'no-cache' })).status).toBe(200);
    expect((await app.anonymous.get('/healthz')).status).toBe(200);
  }, 180_000);
});
