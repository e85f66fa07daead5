import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accepts, freePort } from './redis-process.js';

export interface PgBouncer {
  port: number;
  /** `url` with host and port replaced by PgBouncer's. */
  through(url: string): string;
  log(): string;
  stop(): Promise<void>;
}

/** Debian's pgbouncer binary, or undefined when it is not installed. */
export const pgbouncerBinary = (): string | undefined =>
  spawnSync('/usr/sbin/pgbouncer', ['--version'], { stdio: 'ignore' }).status === 0 ? '/usr/sbin/pgbouncer' : undefined;

/**
 * A private PgBouncer in transaction mode (our own child process on a free
 * port, never a system service) in front of the PostgreSQL on 127.0.0.1:5432,
 * trusting user postgres, ignoring the `options` startup parameter as the
 * README's PgBouncer notes say.
 */
export async function startPgBouncer(): Promise<PgBouncer> {
  const binary = pgbouncerBinary();
  if (!binary) throw new Error('pgbouncer is not installed: apt-get install -y pgbouncer (Debian)');
  const dir = mkdtempSync(join(tmpdir(), 'booking-pgbouncer-'));
  chmodSync(dir, 0o777);
  const port = await freePort();
  writeFileSync(join(dir, 'userlist.txt'), '"postgres" ""\n');
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    `[databases]
* = host=127.0.0.1 port=5432

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${dir}/userlist.txt
admin_users = postgres
pool_mode = transaction
ignore_startup_parameters = options,extra_float_digits
max_client_conn = 500
default_pool_size = 20
logfile = ${dir}/pgbouncer.log
pidfile = ${dir}/pgbouncer.pid
`,
  );
  for (const file of ['userlist.txt', 'pgbouncer.ini']) chmodSync(join(dir, file), 0o644);
  // PgBouncer refuses to run as root; -u hands it to an unprivileged user.
  const args = process.getuid?.() === 0 ? ['-u', 'nobody', join(dir, 'pgbouncer.ini')] : [join(dir, 'pgbouncer.ini')];
  const child: ChildProcess = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const log = () => {
    try {
      return stderr + readFileSync(join(dir, 'pgbouncer.log'), 'utf8');
    } catch {
      return stderr;
    }
  };
  const until = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with ${child.exitCode}: ${log()}`);
    if (Date.now() > until) throw new Error(`pgbouncer did not listen on ${port}: ${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    through: (url) => {
      const via = new URL(url);
      via.host = `127.0.0.1:${port}`;
      return via.toString();
    },
    log,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
