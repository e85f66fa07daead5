import { Cluster, Redis, type RedisOptions } from 'ioredis';

/** A single Redis server or a Redis Cluster; BullMQ, pub/sub and the listing counters work with either. */
export type RedisClient = Redis | Cluster;

/** Where Redis is: REDIS_URL, or the seed nodes of a cluster (REDIS_CLUSTER_NODES). */
export interface RedisTarget {
  redisUrl: string;
  redisClusterNodes?: { host: string; port: number }[] | undefined;
}

export interface RedisClientOptions {
  forWorker?: boolean;
  name?: string;
}

/**
 * A Redis connection. `forWorker` follows BullMQ's rule for blocking
 * connections (retry forever); other clients fail fast so a request never
 * hangs on a Redis outage.
 */
export function createRedis(url: string, options: RedisClientOptions = {}): Redis {
  const redis = new Redis(url, { ...connectionOptions(options), lazyConnect: false });
  // Connection errors are retried by ioredis; logging each would flood the log during an outage.
  redis.on('error', () => undefined);
  return redis;
}

/** A connection to the configured Redis: a Cluster client when REDIS_CLUSTER_NODES is set, else REDIS_URL. */
export function createRedisClient(target: RedisTarget, options: RedisClientOptions = {}): RedisClient {
  if (!target.redisClusterNodes?.length) return createRedis(target.redisUrl, options);
  // Credentials and TLS of REDIS_URL (rediss://user:pass@…) apply to every cluster node.
  const url = new URL(target.redisUrl);
  const cluster = new Cluster(target.redisClusterNodes, {
    enableOfflineQueue: Boolean(options.forWorker),
    redisOptions: {
      ...connectionOptions(options),
      username: url.username ? decodeURIComponent(url.username) : undefined,
      password: url.password ? decodeURIComponent(url.password) : undefined,
      tls: url.protocol === 'rediss:' ? {} : undefined,
    },
  });
  cluster.on('error', () => undefined);
  return cluster;
}

function connectionOptions(options: RedisClientOptions): RedisOptions {
  return options.forWorker
    ? { connectionName: options.name, maxRetriesPerRequest: null }
    : { connectionName: options.name, maxRetriesPerRequest: 1, enableOfflineQueue: false };
}
