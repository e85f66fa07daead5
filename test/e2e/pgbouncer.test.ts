import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DATABASE_POOL } from '../../services/kernel/config.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { isolatedDatabase } from '../support/isolated-database.js';
import { CAPACITY_SUBSCRIPTION, subscribe, untilLive } from '../support/live.js';
import { bookSlot, setupMailProvider } from '../support/mail-fixtures.js';
import { type PgBouncer, startPgBouncer } from '../support/pgbouncer.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';

/** PgBouncer's admin console: the client connections it holds for `database`. */
async function bouncerClients(bouncer: PgBouncer, database: string): Promise<number> {
  const admin = new pg.Client({ host: '127.0.0.1', port: bouncer.port, user: 'postgres', database: 'pgbouncer' });
  await admin.connect();
  try {
    // The console speaks the simple query protocol only.
    const result = await admin.query({ text: 'SHOW CLIENTS', rowMode: 'array' } as pg.QueryConfig);
    const column = result.fields.findIndex((field) => field.name === 'database');
    return result.rows.filter((row: unknown[]) => row[column] === database).length;
  } finally {
    await admin.end();
  }
}

describe('behind PgBouncer in transaction mode (DATABASE_URL) with DIRECT_DATABASE_URL', () => {
  let bouncer: PgBouncer;
  let sink: SmtpSink;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  let app: TestApp;

  beforeAll(async () => {
    bouncer = await startPgBouncer();
    sink = await startSmtpSink();
    db = await isolatedDatabase('pgbouncer');
    // The relay polls only once a minute: a mail within seconds proves LISTEN/NOTIFY works over the direct connection.
    // PgBouncer before 1.21 (Debian's is 1.18) hands a transaction any server connection: named statements off.
    app = await startTestApp({
      config: {
        databaseUrl: bouncer.through(db.url),
        directDatabaseUrl: db.url,
        smtpUrl: sink.url,
        databasePool: { ...DEFAULT_DATABASE_POOL, preparedStatements: false },
      },
      worker: { relayPollMs: 60_000 },
    });
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await db?.drop();
    await sink?.close();
    await bouncer?.stop();
  });

  it('creates and migrates over the direct URL, serves bookings through PgBouncer, and the relay hears commits at once', async () => {
    const name = new URL(db.url).pathname.slice(1);
    expect(app.config.databaseUrl).toContain(`:${bouncer.port}/`);
    const f = await setupMailProvider(app, { slots: 2, capacity: 2 });
    // The pool's connections are PgBouncer clients.
    expect(await bouncerClients(bouncer, name)).toBeGreaterThan(0);
    const sub = subscribe(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [f.resourceUuid] }, { field: 'capacityChanged' });
    try {
      await untilLive(sub, app, f.resourceUuid);
      const { email } = await bookSlot(app, f, 0);
      await sink.waitForMail(email, 1, 15_000);
      await sub.waitFor((item) => item.start && new Date(item.start).toISOString() === f.slots[0]!.from && item.capacity_left === 1, { timeoutMs: 15_000 });
      expect((await app.anonymous.get('/readyz')).status).toBe(200);
    } finally {
      await sub.close();
    }
  });
});
