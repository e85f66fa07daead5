import type { Logger } from './logger.js';
import type { RedisClient } from './redis.js';
import type { Orm } from './orm.js';

export interface HealthReport {
  ok: boolean;
  checks: { postgres: 'ok' | 'timeout' | 'unavailable'; redis: 'ok' | 'timeout' | 'unavailable' };
}

const withTimeout = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms).unref())]);

/**
 * What /healthz says about a failed check: a fixed word, never the driver's
 * message (it may carry host names, users or SQL); the cause goes to the log.
 */
const describe = (error: unknown): 'timeout' | 'unavailable' => (/did not answer within/.test(error instanceof Error ? error.message : '') ? 'timeout' : 'unavailable');

/** Asks PostgreSQL and Redis for an answer, each within a second. */
export async function checkHealth(orm: Orm, redis: RedisClient, logger?: Logger): Promise<HealthReport> {
  const failed = (what: string) => (error: unknown) => {
    logger?.warn(`health check: ${what} failed`, { error: error instanceof Error ? error.message : String(error) });
    return describe(error);
  };
  const [postgres, redisState] = await Promise.all([
    withTimeout(orm.em.getConnection().execute('select 1'), 1000, 'PostgreSQL').then(
      () => 'ok' as const,
      failed('PostgreSQL'),
    ),
    withTimeout(redis.ping(), 1000, 'Redis').then(
      () => 'ok' as const,
      failed('Redis'),
    ),
  ]);
  return { ok: postgres === 'ok' && redisState === 'ok', checks: { postgres, redis: redisState } };
}
