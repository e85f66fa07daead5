import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, type Options, PostgreSqlDriver } from '@mikro-orm/postgresql';
import pg from 'pg';
import { MIGRATIONS } from '../migrations/index.js';
import { type DatabasePool, DEFAULT_DATABASE_POOL } from './config.js';
import { ENTITIES } from './entities.js';

export type Orm = MikroORM;

/**
 * PostgreSQL settings every pooled connection starts with (as the startup
 * `options`, so 0 really means off, also against a role or database default).
 */
export function sessionOptions(pool: DatabasePool): string {
  return `-c statement_timeout=${pool.statementTimeoutMs} -c idle_in_transaction_session_timeout=${pool.idleInTransactionTimeoutMs}`;
}

/**
 * ORM options for a database URL and pool settings (`config.databasePool`);
 * tests pass overrides (another database, a pool size, debug).
 */
export function ormOptions(databaseUrl: string, overrides: Partial<Options> = {}, pool: DatabasePool = DEFAULT_DATABASE_POOL): Options {
  return {
    driver: PostgreSqlDriver,
    clientUrl: databaseUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    discovery: { requireEntitiesArray: true },
    forceUtcTimezone: true,
    allowGlobalContext: false,
    pool: { min: 0, max: pool.max },
    driverOptions: { connection: { options: sessionOptions(pool) } },
    migrations: {
      tableName: 'mikro_orm_migrations',
      path: 'services/migrations',
      pathTs: 'services/migrations',
      migrationsList: MIGRATIONS,
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      emit: 'ts',
      silent: true,
    },
    ...overrides,
  };
}

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) throw new Error('DATABASE_URL names no database');
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      try {
        await client.query(`create database "${name.replace(/"/g, '""')}"`);
      } catch (error) {
        // Another process created it between our check and our create: 42P04 when
        // it had committed already, 23505 (pg_database_datname_index) when both ran at once.
        const code = (error as { code?: string }).code;
        if (code !== '42P04' && code !== '23505') throw error;
      }
    }
  } finally {
    await client.end();
  }
}

/** Connects, creating the database if needed, and applies pending migrations. */
export async function initOrm(databaseUrl: string, overrides: Partial<Options> = {}, pool: DatabasePool = DEFAULT_DATABASE_POOL): Promise<Orm> {
  await ensureDatabase(databaseUrl);
  const orm = await MikroORM.init(ormOptions(databaseUrl, overrides, pool));
  try {
    await migrateWithLock(orm, databaseUrl, () =>
      MikroORM.init(ormOptions(databaseUrl, { ...overrides, pool: { min: 0, max: 1 } }, { max: 1, statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0 })),
    );
  } catch (error) {
    await orm.close(true);
    throw error;
  }
  return orm;
}

/**
 * Applies pending migrations under an advisory lock, so several processes
 * starting at once do not race. The lock is held by a connection of its own,
 * outside the pool and never inside a transaction, without a statement
 * timeout (another process may be migrating for a while). Pending migrations
 * run on a short-lived connection without the pool's timeouts, so a long
 * migration is not cancelled by DATABASE_STATEMENT_TIMEOUT_MS.
 */
async function migrateWithLock(orm: Orm, databaseUrl: string, openMigrationOrm: () => Promise<Orm>): Promise<void> {
  const lockId = 4_117_001;
  const lock = new pg.Client({ connectionString: databaseUrl, options: sessionOptions({ max: 1, statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0 }) });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock($1)', [lockId]);
    if ((await orm.getMigrator().getPendingMigrations()).length === 0) return;
    const migrating = await openMigrationOrm();
    try {
      await migrating.getMigrator().up();
    } finally {
      await migrating.close(true);
    }
  } finally {
    // Ending the session releases the lock.
    await lock.end();
  }
}
