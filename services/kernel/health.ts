import type { Redis } from 'ioredis';
import type { Orm } from './orm.js';

export interface HealthReport {
  ok: boolean;
  checks: { postgres: 'ok' | string; redis: 'ok' | string };
}

const withTimeout = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms).unref())]);

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error)) || 'unreachable';

/** Asks PostgreSQL and Redis for an answer, each within a second. */
export async function checkHealth(orm: Orm, redis: Redis): Promise<HealthReport> {
  const [postgres, redisState] = await Promise.all([
    withTimeout(orm.em.getConnection().execute('select 1'), 1000, 'PostgreSQL').then(
      () => 'ok' as const,
      (error) => describe(error),
    ),
    withTimeout(redis.ping(), 1000, 'Redis').then(
      () => 'ok' as const,
      (error) => describe(error),
    ),
  ]);
  return { ok: postgres === 'ok' && redisState === 'ok', checks: { postgres, redis: redisState } };
}
