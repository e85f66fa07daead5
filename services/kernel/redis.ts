import { Redis, type RedisOptions } from 'ioredis';

/**
 * A Redis connection. `forWorker` follows BullMQ's rule for blocking
 * connections (retry forever); other clients fail fast so a request never
 * hangs on a Redis outage.
 */
export function createRedis(url: string, options: { forWorker?: boolean; name?: string } = {}): Redis {
  const common: RedisOptions = { connectionName: options.name, lazyConnect: false };
  const redis = options.forWorker
    ? new Redis(url, { ...common, maxRetriesPerRequest: null })
    : new Redis(url, { ...common, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  // Connection errors are retried by ioredis; logging each would flood the log during an outage.
  redis.on('error', () => undefined);
  return redis;
}
