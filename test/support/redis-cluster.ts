import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './redis-process.js';

export interface RedisClusterProcess {
  nodes: { host: string; port: number }[];
  stop(): Promise<void>;
}

/**
 * A private Redis Cluster of three masters (redis-server child processes on
 * free ports, no persistence, never the shared Redis), joined with
 * `redis-cli --cluster create`; resolves once every node reports the cluster ok.
 */
export async function startRedisCluster(): Promise<RedisClusterProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'booking-redis-cluster-'));
  const ports = [await freePort(), await freePort(), await freePort()];
  const children: ChildProcess[] = ports.map((port) =>
    spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '2000', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: 'ignore' },
    ),
  );
  const stop = async () => {
    await Promise.all(
      children.map((child) => {
        if (child.exitCode !== null || child.signalCode !== null) return undefined;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        return exited;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) await until(`redis-server on ${port}`, async () => (await ask(port, ['ping'])) === 'PONG');
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '0', '--cluster-yes'], { encoding: 'utf8' });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    for (const port of ports) await until(`cluster state on ${port}`, async () => String(await ask(port, ['cluster', 'info'])).includes('cluster_state:ok'));
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes: ports.map((port) => ({ host: '127.0.0.1', port })), stop };
}

async function ask(port: number, command: string[]): Promise<unknown> {
  const redis = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await redis.call(command[0]!, ...command.slice(1));
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
