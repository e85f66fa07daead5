import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-process.js';
import { startServerProcess } from './server-process.js';

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
  const server = await startServerProcess({ name: 'pgbouncer', binary, args, port, dir, logFile: join(dir, 'pgbouncer.log'), stopSignal: 'SIGTERM' });
  return {
    port,
    through: (url) => {
      const via = new URL(url);
      via.host = `127.0.0.1:${port}`;
      return via.toString();
    },
    log: server.output,
    stop: server.stop,
  };
}
