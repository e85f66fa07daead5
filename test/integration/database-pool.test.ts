import 'reflect-metadata';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DATABASE_POOL } from '../../services/kernel/config.js';
import { initOrm, type Orm, ormOptions } from '../../services/kernel/orm.js';
import { TEST_DATABASE_URL } from '../support/env.js';
import { isolatedDatabase } from '../support/isolated-database.js';

const MIGRATION_LOCK_ID = 4_117_001;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const setting = async (orm: Orm, name: string) =>
  ((await orm.em.fork().getConnection().execute<{ value: string }[]>(`select current_setting('${name}') as value`))[0]!).value;

describe('database pool settings (DATABASE_POOL_MAX, DATABASE_*_TIMEOUT_MS)', () => {
  let orm: Orm;
  beforeAll(async () => {
    orm = await initOrm(TEST_DATABASE_URL, {}, { max: 2, statementTimeoutMs: 300, idleInTransactionTimeoutMs: 400 });
  });
  afterAll(async () => orm?.close());

  it('defaults to 4 connections, 30 s statement and 60 s idle-in-transaction timeouts', () => {
    expect(DEFAULT_DATABASE_POOL).toEqual({ max: 4, statementTimeoutMs: 30_000, idleInTransactionTimeoutMs: 60_000, preparedStatements: true });
    const options = ormOptions(TEST_DATABASE_URL);
    expect(options.pool).toMatchObject({ max: 4 });
    expect(options.driverOptions).toEqual({
      connection: { options: '-c statement_timeout=30000 -c idle_in_transaction_session_timeout=60000' },
    });
  });

  it('lets a test override the pool size and keeps the timeouts', () => {
    const options = ormOptions(TEST_DATABASE_URL, { pool: { min: 0, max: 20 } }, { max: 3, statementTimeoutMs: 5, idleInTransactionTimeoutMs: 0 });
    expect(options.pool).toEqual({ min: 0, max: 20 });
    expect(options.driverOptions).toEqual({ connection: { options: '-c statement_timeout=5 -c idle_in_transaction_session_timeout=0' } });
  });

  it('gives every pooled connection both timeouts', async () => {
    const values = await Promise.all([1, 2, 3, 4].map(() => Promise.all([setting(orm, 'statement_timeout'), setting(orm, 'idle_in_transaction_session_timeout')])));
    for (const value of values) expect(value).toEqual(['300ms', '400ms']);
  });

  it('cancels a statement that runs longer than the statement timeout', async () => {
    await expect(orm.em.fork().getConnection().execute('select pg_sleep(2)')).rejects.toThrow(/statement timeout/);
    expect(await setting(orm, 'statement_timeout')).toBe('300ms');
  });

  it('ends a session left idle inside a transaction, and the pool carries on', async () => {
    const idle = orm.em.fork().transactional(async (tx) => {
      await tx.execute('select 1');
      await sleep(900);
      await tx.execute('select 1');
    });
    await expect(idle).rejects.toThrow();
    expect(await setting(orm, 'idle_in_transaction_session_timeout')).toBe('400ms');
  });

  it('creates and migrates a new database with a pool of one connection', async () => {
    const database = await isolatedDatabase('pool_one');
    try {
      const single = await initOrm(database.url, {}, { max: 1, statementTimeoutMs: 1000, idleInTransactionTimeoutMs: 1000 });
      try {
        expect(await single.getMigrator().getPendingMigrations()).toEqual([]);
        expect(await setting(single, 'statement_timeout')).toBe('1s');
      } finally {
        await single.close();
      }
    } finally {
      await database.drop();
    }
  });

  it('several processes starting at once on a database that does not exist yet all come up', async () => {
    // Concurrent CREATE DATABASE fails with 23505 (pg_database_datname_index) in all but one session.
    const database = await isolatedDatabase('create_race');
    try {
      const orms = await Promise.all(Array.from({ length: 4 }, () => initOrm(database.url, {}, { max: 1, statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0 })));
      try {
        for (const each of orms) expect(await each.getMigrator().getPendingMigrations()).toEqual([]);
      } finally {
        await Promise.all(orms.map((each) => each.close()));
      }
    } finally {
      await database.drop();
    }
  });

  it('0 turns a timeout off', async () => {
    const off = await initOrm(TEST_DATABASE_URL, {}, { max: 1, statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0 });
    try {
      expect(await setting(off, 'statement_timeout')).toBe('0');
      expect(await setting(off, 'idle_in_transaction_session_timeout')).toBe('0');
    } finally {
      await off.close();
    }
  });

  it('waits for the migration lock longer than the statement timeout', async () => {
    // Another process holds the migration lock (it is migrating) for longer than this pool's statement timeout.
    const other = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await other.connect();
    try {
      await other.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
      const started = Date.now();
      const starting = initOrm(TEST_DATABASE_URL, {}, { max: 2, statementTimeoutMs: 100, idleInTransactionTimeoutMs: 100 });
      await sleep(700);
      await other.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
      const late = await starting;
      try {
        expect(Date.now() - started).toBeGreaterThanOrEqual(700);
        expect(await setting(late, 'statement_timeout')).toBe('100ms');
      } finally {
        await late.close();
      }
    } finally {
      await other.end();
    }
  });
});
