import { type ChildProcess, spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { Redis } from 'ioredis';

/**
 * A private redis-server child process on its own port (never the shared
 * one on 6379), without persistence: stopping and starting it again loses
 * every key, as a Redis outage with data loss would.
 */
export interface RedisProcess {
  port: number;
  url: string;
  /** Stops the server (SIGKILL by default: an outage, not a shutdown). */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
}

/** A TCP port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Whether something accepts TCP connections on the port of 127.0.0.1 right now. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startRedisProcess(): Promise<RedisProcess> {
  const port = await freePort();
  let child: ChildProcess | undefined;

  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    const until = Date.now() + 10_000;
    for (;;) {
      try {
        if (probe.status !== 'ready') await probe.connect();
        if ((await probe.ping()) === 'PONG') break;
      } catch {
        if (Date.now() > until) throw new Error(`redis-server on ${port} did not start`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    probe.disconnect();
  };

  const stop = async (signal: NodeJS.Signals = 'SIGKILL') => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill(signal);
    await exited;
  };

  await start();
  return { port, url: `redis://127.0.0.1:${port}`, start, stop };
}
