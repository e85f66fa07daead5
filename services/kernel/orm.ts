import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, type Options, PostgreSqlDriver } from '@mikro-orm/postgresql';
import pg from 'pg';
import { MIGRATIONS } from '../migrations/index.js';
import { ENTITIES } from './entities.js';

export type Orm = MikroORM;

/** ORM options for a database URL; tests pass overrides (another database, debug). */
export function ormOptions(databaseUrl: string, overrides: Partial<Options> = {}): Options {
  return {
    driver: PostgreSqlDriver,
    clientUrl: databaseUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    discovery: { requireEntitiesArray: true },
    forceUtcTimezone: true,
    allowGlobalContext: false,
    pool: { min: 0, max: 10 },
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
        // Another process created it between our check and our create.
        if ((error as { code?: string }).code !== '42P04') throw error;
      }
    }
  } finally {
    await client.end();
  }
}

/** Connects, creating the database if needed, and applies pending migrations. */
export async function initOrm(databaseUrl: string, overrides: Partial<Options> = {}): Promise<Orm> {
  await ensureDatabase(databaseUrl);
  const orm = await MikroORM.init(ormOptions(databaseUrl, overrides));
  await migrateWithLock(orm);
  return orm;
}

/** Applies migrations under an advisory lock, so several processes starting at once do not race. */
async function migrateWithLock(orm: Orm): Promise<void> {
  const lockId = 4_117_001;
  const knex = orm.em.getConnection().getKnex();
  const connection = await knex.client.acquireConnection();
  try {
    await connection.query('select pg_advisory_lock($1)', [lockId]);
    try {
      await orm.getMigrator().up();
    } finally {
      await connection.query('select pg_advisory_unlock($1)', [lockId]);
    }
  } finally {
    await knex.client.releaseConnection(connection);
  }
}
