import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, type Options, PostgreSqlDriver } from '@mikro-orm/postgresql';
import pg from 'pg';
import { MIGRATIONS } from '../migrations/index.js';
import { type Config, type DatabasePool, DEFAULT_DATABASE_POOL } from './config.js';
import { ENTITIES } from './entities.js';

/** What a pool's connections are opened with (DatabasePool without what only the queries look at). */
type ConnectionLimits = Omit<DatabasePool, 'preparedStatements'>;

export type Orm = MikroORM;

/**
 * PostgreSQL settings every pooled connection starts with (as the startup
 * `options`, so 0 really means off, also against a role or database default).
 */
export function sessionOptions(pool: ConnectionLimits): string {
  return `-c statement_timeout=${pool.statementTimeoutMs} -c idle_in_transaction_session_timeout=${pool.idleInTransactionTimeoutMs}`;
}

/**
 * ORM options for a database URL and pool settings (`config.databasePool`);
 * tests pass overrides (another database, a pool size, debug).
 */
export function ormOptions(databaseUrl: string, overrides: Partial<Options> = {}, pool: ConnectionLimits = DEFAULT_DATABASE_POOL): Options {
  return {
    driver: PostgreSqlDriver,
    clientUrl: databaseUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    discovery: { requireEntitiesArray: true },
    forceUtcTimezone: true,
    // Whether a missing database is created is ours to decide (DB_CREATE_IF_MISSING, ensureDatabase below), over the
    // direct URL; MikroORM's own check would connect to the `postgres` database on every start, also through PgBouncer.
    ensureDatabase: false,
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

export interface StartupOptions {
  /** A direct connection (not PgBouncer in transaction mode) for creating the database, the migration lock and migrations; the pool's URL by default. */
  directUrl?: string;
  /** Create the database when it is missing (DB_CREATE_IF_MISSING); default true. */
  createIfMissing?: boolean;
  /** Apply pending migrations (MIGRATE_ON_START); default true. */
  migrate?: boolean;
}

/** The startup options a process takes from its configuration. */
export const startupOptions = (config: Pick<Config, 'directDatabaseUrl' | 'createDatabaseIfMissing' | 'migrateOnStart'>): StartupOptions => ({
  directUrl: config.directDatabaseUrl,
  createIfMissing: config.createDatabaseIfMissing,
  migrate: config.migrateOnStart,
});

/** Connects, creating the database if needed and allowed, and applies pending migrations unless told not to. */
export async function initOrm(
  databaseUrl: string,
  overrides: Partial<Options> = {},
  pool: ConnectionLimits = DEFAULT_DATABASE_POOL,
  startup: StartupOptions = {},
): Promise<Orm> {
  const directUrl = startup.directUrl ?? databaseUrl;
  if (startup.createIfMissing ?? true) await ensureDatabase(directUrl);
  const orm = await MikroORM.init(ormOptions(databaseUrl, overrides, pool));
  if (overrides.connect !== false) {
    const check = await orm.checkConnection();
    if (!check.ok) {
      await orm.close(true);
      throw new Error(`Cannot connect to the database ${new URL(databaseUrl).pathname.slice(1)}: ${check.reason}${startup.createIfMissing === false ? ' (DB_CREATE_IF_MISSING is off: create it, or run npm run migrate with DB_CREATE_IF_MISSING=true)' : ''}`);
    }
  }
  if (startup.migrate ?? true) {
    try {
      await migrateDatabase(directUrl, overrides, orm);
    } catch (error) {
      await orm.close(true);
      throw error;
    }
  }
  return orm;
}

/** Options of the short-lived ORM that runs migrations: one direct connection, no statement limits. */
const migrationOptions = (directUrl: string, overrides: Partial<Options> = {}) =>
  ormOptions(directUrl, { ...overrides, pool: { min: 0, max: 1 } }, { max: 1, statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0 });

/**
 * Applies pending migrations under the advisory lock; returns the names applied
 * (`npm run migrate`, MIGRATE_ON_START). A process passes its ORM, which looks
 * for pending migrations (under the lock: the first look creates the
 * migrations table) so the usual case, nothing pending, opens no second ORM.
 */
export async function migrateDatabase(directUrl: string, overrides: Partial<Options> = {}, running?: Orm): Promise<string[]> {
  return migrateWithLock(directUrl, running, () => MikroORM.init(migrationOptions(directUrl, overrides)));
}

/** Executed and pending migrations, by name (`npm run migrate:status`). */
export async function migrationStatus(directUrl: string): Promise<{ executed: string[]; pending: string[] }> {
  const orm = await MikroORM.init(migrationOptions(directUrl));
  try {
    const migrator = orm.getMigrator();
    const [executed, pending] = await Promise.all([migrator.getExecutedMigrations(), migrator.getPendingMigrations()]);
    return { executed: executed.map((m) => m.name), pending: pending.map((m) => m.name) };
  } finally {
    await orm.close(true);
  }
}

/**
 * Applies pending migrations under an advisory lock, so several processes
 * starting at once do not race. The lock is held by a connection of its own,
 * outside the pool and never inside a transaction, without a statement
 * timeout (another process may be migrating for a while). Pending migrations
 * run on a short-lived connection without the pool's timeouts, so a long
 * migration is not cancelled by DATABASE_STATEMENT_TIMEOUT_MS.
 */
async function migrateWithLock(directUrl: string, running: Orm | undefined, openMigrationOrm: () => Promise<Orm>): Promise<string[]> {
  const lockId = 4_117_001;
  const lock = new pg.Client({ connectionString: directUrl, options: sessionOptions({ max: 1, statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0 }) });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock($1)', [lockId]);
    if (running && (await running.getMigrator().getPendingMigrations()).length === 0) return [];
    const migrating = await openMigrationOrm();
    try {
      const migrator = migrating.getMigrator();
      if ((await migrator.getPendingMigrations()).length === 0) return [];
      return (await migrator.up()).map((migration) => migration.name);
    } finally {
      await migrating.close(true);
    }
  } finally {
    // Ending the session releases the lock.
    await lock.end();
  }
}
