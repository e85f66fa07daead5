import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from './env.js';
import { unique } from './http.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ChildGateway {
  baseUrl: string;
  pid: number;
  /** What the process wrote to stderr (for failure messages). */
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * Starts `schema/gateway.ts` as a second OS process on the test database and
 * Redis (the same entry point `npm run start:gateway` runs, through tsx's
 * loader, so there is no npx wrapper between the test and the pid it stops).
 * PORT=0 lets the OS pick a free port; the process logs it on startup.
 */
export async function startChildGateway(env: Record<string, string> = {}, timeoutMs = 60_000): Promise<ChildGateway> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'schema/gateway.ts'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: TEST_DATABASE_URL,
      REDIS_URL: TEST_REDIS_URL,
      PORT: '0',
      LOG_LEVEL: 'info',
      QUEUE_PREFIX: unique('child'),
      PUBLIC_RATE_LIMIT: 'off',
      WS_MAX_CONNECTIONS_PER_IP: '100000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-20_000)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child gateway did not start within ${timeoutMs} ms:\n${stderr}`)), timeoutMs);
    let buffer = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        const port = listeningPort(line);
        if (port !== undefined) {
          clearTimeout(timer);
          resolve(port);
        }
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child gateway exited with ${code}:\n${stderr}`));
    });
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stderr: () => stderr,
    stop: () => stopChild(child),
  };
}

function listeningPort(line: string): number | undefined {
  try {
    const entry = JSON.parse(line) as { msg?: string; port?: number };
    return entry.msg === 'gateway listening' && typeof entry.port === 'number' ? entry.port : undefined;
  } catch {
    return undefined;
  }
}

/** SIGTERM (graceful shutdown), SIGKILL if it has not exited after 10 seconds. */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
