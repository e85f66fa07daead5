import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { runToEnd, spawnGroup, stopGroup } from './lib/children.js';
import { request } from './lib/http.js';
import { log, sleep } from './lib/log.js';

export const BENCH_DATABASE = 'booking_bench';
export const DATABASE_URL = `postgresql://postgres@127.0.0.1:5432/${BENCH_DATABASE}`;
export const ADMIN_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = 'redis://127.0.0.1:6379/3';
export const QUEUE_PREFIX = 'bench';
/** Hold length of reservations in the benchmark (P5 waits for holds to expire): 0.1 min = 6 s. */
export const HOLD_MINUTES = 0.1;
export const CRM_ID = 'bench';

const projectRoot = new URL('..', import.meta.url).pathname;

/** Drops and recreates the bench database and empties the bench Redis database. */
export async function resetStores(): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${BENCH_DATABASE} with (force)`);
    await admin.query(`create database ${BENCH_DATABASE}`);
  } finally {
    await admin.end();
  }
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    await redis.flushdb();
  } finally {
    redis.disconnect();
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface RunningService {
  baseUrl: string;
  port: number;
  env: NodeJS.ProcessEnv;
  logFile: string;
  child: ChildProcess;
  stop(): Promise<void>;
  /** The last lines of the service's output (for error reports). */
  tail(lines?: number): string;
}

/** The environment the service runs with: everything of ours, with the bench's own settings on top. GATEWAY_PROCESSES passes through. */
export function serviceEnv(port: number, mailDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PORT: String(port),
    DATABASE_URL,
    REDIS_URL,
    QUEUE_PREFIX,
    HOLD_MINUTES: String(HOLD_MINUTES),
    WS_CONNECTIONS_PER_IP: '1000000',
    WS_MAX_CONNECTIONS_PER_IP: '1000000',
    PUBLIC_RATE_LIMIT: 'off',
    LOG_LEVEL: 'warn',
    MAIL_DIR: mailDir,
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    // A real secret, so the service also starts when its run mode sets NODE_ENV=production.
    LINK_SIGNING_SECRET: randomBytes(24).toString('hex'),
  };
}

/** Spawns `npm start` in a process group of its own and waits until GET /healthz answers 200. */
export async function startService(workDir: string, startupDeadline: number): Promise<RunningService> {
  const port = await freePort();
  const env = serviceEnv(port, join(workDir, 'mail'));
  const logFile = join(workDir, 'service.log');
  const out = createWriteStream(logFile);
  const child = spawnGroup('npm', ['start'], { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.pipe(out, { end: false });
  child.stderr!.pipe(out, { end: false });
  const baseUrl = `http://127.0.0.1:${port}`;
  const tail = (lines = 30) => {
    try {
      return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  };
  const service: RunningService = {
    baseUrl,
    port,
    env,
    logFile,
    child,
    tail,
    stop: async () => {
      await stopGroup(child, 10_000);
      out.end();
    },
  };
  log(`npm start on port ${port}${env.GATEWAY_PROCESSES ? ` with GATEWAY_PROCESSES=${env.GATEWAY_PROCESSES}` : ''} (output in ${logFile})`);
  let exited: string | null = null;
  child.once('exit', (code, signal) => (exited = `${signal ?? code}`));
  while (Date.now() < startupDeadline) {
    if (exited !== null) throw new Error(`npm start exited (${exited}) before it was healthy:\n${tail()}`);
    const health = await request(baseUrl, 'GET', '/healthz', { timeoutMs: 2_000 });
    if (health.status === 200) return service;
    await sleep(250);
  }
  await service.stop();
  throw new Error(`the service did not answer GET /healthz with 200 in time:\n${tail()}`);
}

/** Issues a key for the bench CRM with the admin CLI; the key is the last line of its stdout. */
export async function issueCrmKey(env: NodeJS.ProcessEnv): Promise<string> {
  const result = await runToEnd('npm', ['run', '--silent', 'admin', '--', 'create-crm', CRM_ID], { cwd: projectRoot, env, timeoutMs: 60_000 });
  const key = result.stdout.trim().split('\n').pop()?.trim();
  if (result.code !== 0 || !key) throw new Error(`admin create-crm failed (${result.timedOut ? 'timed out' : `exit ${result.code}`}): ${result.stderr.trim()}`);
  return key;
}

/** Counts the warnings and errors in the service's output (JSON lines) and keeps the first few distinct messages. */
export function summarizeLog(logFile: string): { warnings: number; errors: number; firstMessages: string[] } | null {
  let text: string;
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return null;
  }
  const summary = { warnings: 0, errors: 0, firstMessages: [] as string[] };
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    let level: string | undefined;
    let message = line.trim();
    if (!message) continue;
    try {
      const parsed = JSON.parse(message) as { level?: string; msg?: string; error?: unknown };
      level = parsed.level;
      message = `${parsed.level}: ${parsed.msg}${parsed.error ? ` (${typeof parsed.error === 'string' ? parsed.error : JSON.stringify(parsed.error)})` : ''}`;
    } catch {
      level = /error/i.test(message) ? 'error' : undefined;
    }
    if (level === 'warn') summary.warnings++;
    else if (level === 'error') summary.errors++;
    else continue;
    const key = message.slice(0, 200);
    if (!seen.has(key) && summary.firstMessages.length < 8) {
      seen.add(key);
      summary.firstMessages.push(key);
    }
  }
  return summary;
}
