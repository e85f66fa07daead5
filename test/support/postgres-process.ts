import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './redis-process.js';

/**
 * A private PostgreSQL server (initdb into a temporary directory, its own
 * port), for fault tests that stop and start PostgreSQL: never the shared
 * server others use. Trust authentication for `postgres` on 127.0.0.1.
 * As root, the server runs as the `postgres` system user (PostgreSQL
 * refuses to run as root).
 */
export interface PostgresProcess {
  port: number;
  /** The URL of a database on this server (created by whoever connects first, e.g. initOrm). */
  urlOf(database: string): string;
  /** Stops the server: `fast` disconnects every client and aborts open transactions, as a restart does. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its data directory. */
  destroy(): Promise<void>;
}

/** The directory of the PostgreSQL server binaries, or undefined when none is installed. */
export function postgresBinDir(): string | undefined {
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    if (existsSync(join(dir, 'initdb'))) return dir;
  } catch {
    // no pg_config on the PATH: look where Debian installs the server
  }
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) if (existsSync(join(root, version, 'bin', 'initdb'))) return join(root, version, 'bin');
  return undefined;
}

export async function startPostgresProcess(binDir: string): Promise<PostgresProcess> {
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'booking-postgres-'));
  const dataDir = join(dir, 'data');
  const asOwner = (command: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]);
  if (asRoot) {
    const { uid, gid } = { uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })) };
    chownSync(dir, uid, gid);
  }
  const [initdb, initArgs] = asOwner(join(binDir, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  execFileSync(initdb, initArgs, { stdio: 'ignore' });
  const port = await freePort();
  let child: ChildProcess | undefined;

  const ready = async () => {
    const until = Date.now() + 20_000;
    for (;;) {
      const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
      try {
        await client.connect();
        await client.query('select 1');
        await client.end();
        return;
      } catch {
        await client.end().catch(() => undefined);
        if (Date.now() > until) throw new Error(`private PostgreSQL on ${port} did not start`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };

  const start = async () => {
    const [postgres, args] = asOwner(join(binDir, 'postgres'), ['-D', dataDir, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=60']);
    child = spawn(postgres, args, { stdio: 'ignore' });
    await ready();
  };

  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    // pg_ctl as the server's owner: `fast` aborts open transactions and disconnects every client, `immediate` is a crash (recovery on start).
    const [pgCtl, args] = asOwner(join(binDir, 'pg_ctl'), ['stop', '-D', dataDir, '-m', mode, '-w']);
    execFileSync(pgCtl, args, { stdio: 'ignore' });
    await exited;
  };

  await start();
  return {
    port,
    urlOf: (database) => `postgresql://postgres@127.0.0.1:${port}/${database}`,
    start,
    stop,
    destroy: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
