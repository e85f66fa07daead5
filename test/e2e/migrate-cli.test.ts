import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { initOrm } from '../../services/kernel/orm.js';
import { MIGRATIONS } from '../../services/migrations/index.js';
import { isolatedDatabase } from '../support/isolated-database.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `npm run migrate[:status]`'s script (tsx, without npm in between) with `env`; its exit code and output. */
function migrate(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/migrate.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('npm run migrate / migrate:status, DB_CREATE_IF_MISSING, MIGRATE_ON_START', () => {
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  afterAll(async () => database?.drop());

  it('refuses a missing database without DB_CREATE_IF_MISSING, creates and migrates it with it, and reports the status', async () => {
    database = await isolatedDatabase('migrate');
    const env = { DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/unused', DIRECT_DATABASE_URL: database.url };
    const refused = await migrate(['up'], { ...env, DB_CREATE_IF_MISSING: 'false' });
    expect(refused.code, refused.output).toBe(1);
    expect(refused.output).toMatch(/migrate up failed: .*does not exist/);

    // Migrations go over DIRECT_DATABASE_URL: DATABASE_URL (a PgBouncer, say) is not even reachable here.
    const applied = await migrate(['up'], { ...env, DB_CREATE_IF_MISSING: 'true' });
    expect(applied.code, applied.output).toBe(0);
    expect(applied.output).toContain(`applied ${MIGRATIONS.map((m) => m.name).join(', ')}`);

    const status = await migrate(['status'], env);
    expect(status.code, status.output).toBe(0);
    expect(status.output).toContain(`${MIGRATIONS.length} executed, 0 pending`);
    expect((await migrate(['up'], env)).output).toContain('up to date');
    expect((await migrate(['sideways'], env)).code).toBe(2);
  }, 120_000);

  it('a process with MIGRATE_ON_START off and DB_CREATE_IF_MISSING off neither creates nor migrates', async () => {
    const fresh = await isolatedDatabase('nomigrate');
    const name = new URL(fresh.url).pathname.slice(1);
    try {
      // A process on a database that does not exist stops at start with a message that says what to do.
      await expect(initOrm(fresh.url, {}, undefined, { createIfMissing: false, migrate: false })).rejects.toThrow(
        new RegExp(`Cannot connect to the database ${name}: .*DB_CREATE_IF_MISSING is off`),
      );
      const admin = new URL(fresh.url);
      admin.pathname = '/postgres';
      const client = new pg.Client({ connectionString: admin.toString() });
      await client.connect();
      const found = await client.query('select 1 from pg_database where datname = $1', [name]);
      await client.end();
      expect(found.rowCount).toBe(0);
      // With creation but without migrations: an empty database.
      const orm = await initOrm(fresh.url, {}, undefined, { createIfMissing: true, migrate: false });
      try {
        const tables = await orm.em.fork().getConnection().execute<{ tablename: string }[]>(`select tablename from pg_tables where schemaname = 'public'`);
        expect(tables).toEqual([]);
      } finally {
        await orm.close(true);
      }
    } finally {
      await fresh.drop();
    }
  }, 60_000);
});
