import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL } from '../support/env.js';
import { unique } from '../support/http.js';
import { isolatedDatabase } from '../support/isolated-database.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface LogLine {
  msg?: string;
  process?: string;
  pid?: number;
  port?: number;
  signal?: string;
  name?: string;
  exit?: string | number;
  childPid?: number;
}

/** Runs a node script of the repository to its end; rejects with its output when it fails. */
function runNode(args: string[], timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`node ${args.join(' ')} ended with ${signal ?? code}:\n${output}`));
    });
  });
}

/** One GET /healthz on a new connection (so the cluster may hand it to any gateway); the pid that answered. */
function healthPid(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk) => (body += chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve((JSON.parse(body) as { pid: number }).pid) : reject(new Error(`healthz ${res.statusCode}: ${body}`))));
    });
    req.on('timeout', () => req.destroy(new Error('healthz timed out')));
    req.on('error', reject);
  });
}

/** The pids that answered `requests` health checks, each on its own connection. */
async function answeringPids(port: number, requests = 12): Promise<Set<number>> {
  const pids = new Set<number>();
  for (let i = 0; i < requests; i++) pids.add(await healthPid(port));
  return pids;
}

/** The command line of a running process (Linux), or undefined where /proc does not exist. */
const commandLine = (pid: number) => (existsSync('/proc') ? readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ') : undefined);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

interface Service {
  supervisor: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** JSON log lines of every process so far (info on stdout, warnings and errors on stderr). */
  lines: LogLine[];
  output(): string;
  logged(msg: string, processName?: string): LogLine[];
  /** Resolves once `done()` holds; rejects with the output when the supervisor exits first or time runs out. */
  until(what: string, done: () => boolean, timeoutMs?: number): Promise<void>;
  /** SIGKILL for whatever is still running (after a failed test). */
  kill(): void;
}

/**
 * Runs `node scripts/start.mjs`, what `npm start` runs, with `env` on top of
 * this environment; with `viaShell`, under a shell that waits for it (the
 * returned `supervisor` is then that shell).
 */
function startService(env: Record<string, string>, viaShell = false): Service {
  const [command, args] = viaShell ? ['sh', ['-c', `"${process.execPath}" scripts/start.mjs; true`]] : [process.execPath, ['scripts/start.mjs']];
  const supervisor = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: unique('cluster'), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    supervisor.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let output = '';
  const lines: LogLine[] = [];
  for (const stream of [supervisor.stdout!, supervisor.stderr!]) {
    let buffer = '';
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      buffer += chunk;
      for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
        const text = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        try {
          lines.push(JSON.parse(text) as LogLine);
        } catch {
          // not a log line
        }
      }
    });
  }
  return {
    supervisor,
    exited,
    lines,
    output: () => output,
    logged: (msg, processName) => lines.filter((line) => line.msg === msg && (!processName || line.process === processName)),
    until: async (what, done, timeoutMs = 45_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!done()) {
        if (supervisor.exitCode !== null || supervisor.signalCode !== null) throw new Error(`npm start exited while waiting for ${what}:\n${output}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output.slice(-8000)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    kill: () => {
      for (const pid of new Set([supervisor.pid, ...lines.flatMap((line) => [line.pid, line.childPid])])) if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
    },
  };
}

// What `npm start` does first on a fresh clone; a no-op when dist/ is up to date. Done once here so the tests time only the processes.
beforeAll(() => runNode(['scripts/build.mjs', '--if-stale'], 170_000), 180_000);

/** A process's niceness (field 19 of /proc/<pid>/stat; the command name in parentheses may hold spaces). */
const niceness = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);

describe('npm start: compiled supervisor with GATEWAY_PROCESSES=2 and a worker', () => {
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  let mailDir: string;
  let service: Service;
  let supervisor: ChildProcess;

  const logged = (msg: string, processName?: string) => service.logged(msg, processName);
  const gatewayPids = () => [...new Set(logged('gateway listening').map((line) => line.pid!))];
  const workerPids = () => logged('worker started', 'worker').map((line) => line.pid!);
  const until = (what: string, done: () => boolean) => service.until(what, done);

  beforeAll(async () => {
    database = await isolatedDatabase('cluster');
    mailDir = mkdtempSync(join(tmpdir(), 'booking-cluster-mail-'));
    // In a cluster every gateway gets the same port for PORT=0.
    service = startService({
      DATABASE_URL: database.url,
      PORT: '0',
      GATEWAY_PROCESSES: '2',
      MAIL_DIR: mailDir,
      WORKER_HEALTH_PORT: '0',
      // Harmless flags, to see them reach each kind of process.
      GATEWAY_NODE_ARGS: '--max-old-space-size=1537',
      WORKER_NODE_ARGS: '--max-old-space-size=1538',
    });
    supervisor = service.supervisor;
  });

  afterAll(async () => {
    service?.kill();
    rmSync(mailDir, { recursive: true, force: true });
    await database?.drop();
  });

  it('runs two gateway processes that answer on one port, and the worker', async () => {
    await until('two gateways and the worker', () => gatewayPids().length === 2 && workerPids().length === 1);
    const ports = new Set(logged('gateway listening').map((line) => line.port));
    expect(ports.size).toBe(1);
    const port = [...ports][0]!;
    expect(port).toBeGreaterThan(0);
    // No tsx at run time: plain node runs the compiled code.
    for (const pid of [supervisor.pid!, ...gatewayPids(), ...workerPids()]) expect(commandLine(pid) ?? '').not.toContain('tsx');
    for (const pid of gatewayPids()) expect(commandLine(pid) ?? 'dist/schema/gateway.js').toContain('dist/schema/gateway.js');
    expect(commandLine(workerPids()[0]!) ?? 'dist/worker/main.js').toContain('dist/worker/main.js');
    // GATEWAY_NODE_ARGS and WORKER_NODE_ARGS reach their processes only.
    for (const pid of gatewayPids()) expect(commandLine(pid) ?? '--max-old-space-size=1537').toContain('--max-old-space-size=1537');
    expect(commandLine(workerPids()[0]!) ?? '--max-old-space-size=1538').toContain('--max-old-space-size=1538');
    expect(commandLine(workerPids()[0]!) ?? '').not.toContain('1537');
    // The cluster hands connections round-robin; a dozen cannot all go to one process.
    expect(await answeringPids(port)).toEqual(new Set(gatewayPids()));
    expect(logged('starting', 'supervisor')[0]).toMatchObject({ gateways: 2, workers: 1 });
    // The worker runs at a lower priority (WORKER_NICE, 10 by default), the gateways at the supervisor's.
    expect(niceness(workerPids()[0]!)).toBe(10);
    for (const pid of gatewayPids()) expect(niceness(pid)).toBe(niceness(supervisor.pid!));
    // The worker answers its health port (WORKER_HEALTH_PORT=0: a free one, logged).
    await until('the worker health port', () => logged('worker health listening', 'worker').length === 1);
    const healthPort = logged('worker health listening', 'worker')[0]!.port!;
    const ready = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
    expect(ready.status).toBe(200);
  }, 60_000);

  it('restarts a gateway and the worker that die', async () => {
    const [port] = logged('gateway listening').map((line) => line.port!);
    const [killedGateway, survivingGateway] = gatewayPids();
    const [killedWorker] = workerPids();
    process.kill(killedGateway!, 'SIGKILL');
    process.kill(killedWorker!, 'SIGKILL');
    await until('a new gateway and a new worker', () => gatewayPids().length === 3 && workerPids().length === 2);
    const restarts = logged('process exited unexpectedly; restarting it', 'supervisor');
    expect(restarts.map((line) => line.exit)).toEqual(['SIGKILL', 'SIGKILL']);
    expect(restarts.map((line) => line.name).sort()).toEqual([expect.stringMatching(/^gateway [12]$/), 'worker']);
    const newGateway = gatewayPids()[2]!;
    expect(logged('gateway listening').find((line) => line.pid === newGateway)!.port).toBe(port);
    expect(await answeringPids(port!)).toEqual(new Set([survivingGateway, newGateway]));
    // GET /metrics on the shared port sums every gateway process and adds the supervisor's restart counter.
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^booking_process_restarts_total\{process="gateway"\} 1$/m);
    expect(metrics).toMatch(/^booking_process_restarts_total\{process="worker"\} 1$/m);
    // Ten more health checks, spread over both gateways by the cluster, all show in the one sum.
    const healthChecks = (text: string) => Number(/^booking_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} (\d+)$/m.exec(text)?.[1]);
    const before = healthChecks(metrics);
    expect(await answeringPids(port!, 10)).toEqual(new Set([survivingGateway, newGateway]));
    expect(healthChecks(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())).toBe(before + 10);
  }, 60_000);

  it('SIGTERM stops every process gracefully', async () => {
    const gateways = gatewayPids().filter(alive);
    const worker = workerPids().at(-1)!;
    expect(gateways).toHaveLength(2);
    supervisor.kill('SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
    for (const pid of [...gateways, worker]) {
      expect(service.lines.some((line) => line.msg === 'shutting down' && line.pid === pid)).toBe(true);
      expect(alive(pid)).toBe(false);
    }
    expect(logged('stopped', 'supervisor')).toMatchObject([{ exitCode: 0 }]);
  });
});

describe('npm start and the shell that started it', () => {
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  const services: Service[] = [];

  beforeAll(async () => {
    database = await isolatedDatabase('parent');
  });
  afterAll(async () => {
    for (const service of services) service.kill();
    await database?.drop();
  });

  /** Starts the service under a shell, waits for its gateway, kills the shell; answers the supervisor's pid. */
  async function orphaned(env: Record<string, string>): Promise<{ service: Service; pid: number }> {
    const service = startService({ DATABASE_URL: database.url, PORT: '0', GATEWAY_PROCESSES: '1', WORKER_HEALTH_PORT: '0', ...env }, true);
    services.push(service);
    await service.until('the gateway', () => service.logged('gateway listening').length === 1);
    const pid = service.logged('starting', 'supervisor')[0]!.pid!;
    service.supervisor.kill('SIGKILL');
    await service.exited;
    return { service, pid };
  }

  it('started by hand (nohup node scripts/start.mjs &), it outlives the shell', async () => {
    const { service, pid } = await orphaned({ npm_lifecycle_event: '' });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(alive(pid)).toBe(true);
    expect(service.logged('shutting down', 'supervisor')).toEqual([]);
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 20_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(pid)).toBe(false);
  }, 60_000);

  it('a SIGTERM to every process at once (Ctrl-C, a kill of the process group) is a clean stop in production: every exit code 0', async () => {
    // NODE_ENV=production: Apollo's own signal handler, off under NODE_ENV=test, raised the signal again (exit code 1).
    const service = startService({
      DATABASE_URL: database.url,
      PORT: '0',
      GATEWAY_PROCESSES: '2',
      WORKER_HEALTH_PORT: '0',
      NODE_ENV: 'production',
      LINK_SIGNING_SECRET: 'a-secret-of-the-production-start-test-0123456789',
      // Off by default in production; the test's database may not exist yet when this test runs alone.
      DB_CREATE_IF_MISSING: 'true',
    });
    services.push(service);
    // Each logs its last line of the start in the tick that installs its signal handlers (the worker: its health port).
    await service.until('two gateways and the worker', () => service.logged('gateway listening').length === 2 && service.logged('worker health listening', 'worker').length === 1);
    const pids = [service.supervisor.pid!, ...service.logged('gateway listening').map((line) => line.pid!), service.logged('worker started', 'worker')[0]!.pid!];
    for (const pid of pids) process.kill(pid, 'SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(service.logged('process stopped', 'supervisor').map((line) => line.exit)).toEqual([0, 0, 0]);
  }, 60_000);

  it('under npm, it stops once npm’s shell is gone (a SIGTERM to npm is not passed on)', async () => {
    const { service, pid } = await orphaned({ npm_lifecycle_event: 'start' });
    const deadline = Date.now() + 20_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(pid)).toBe(false);
    expect(service.logged('shutting down', 'supervisor')).toMatchObject([{ signal: 'parent gone' }]);
  }, 60_000);
});
