import type { RedisClient } from './redis.js';

/**
 * A change counter per resource in Redis, shared by every gateway and worker.
 * A write that changed a resource's capacity bumps it after its transaction
 * commits (and before the request answers); the outbox relay bumps it again
 * when it publishes the change, which covers a process that died between
 * commit and bump. Caches of derived answers (the bookables listing) store
 * the counters they were computed under and are stale once one moved.
 *
 * Redis INCR is atomic and ordered: a listing request that starts after a
 * booking answered reads the bumped counter, so it never gets an answer
 * computed before that booking.
 */
export interface CalendarVersions {
  /** The current counters of the resources, joined into one token; null when Redis does not answer (then nothing is cached). */
  read(resourceIds: readonly string[]): Promise<string | null>;
  /** Moves the counters of the resources on; failures are logged by the caller and never fail the write. */
  bump(resourceIds: Iterable<string>): Promise<void>;
}

/** Counters under `<prefix>:calendar:<resourceId>`. Keys expire after a week without change (a missing key reads as 0, still a new token after a bump). */
export function redisCalendarVersions(redis: RedisClient, prefix: string): CalendarVersions {
  const key = (id: string) => `${prefix}:calendar:${id}`;
  return {
    async read(resourceIds) {
      if (!resourceIds.length) return '';
      try {
        const values = await redis.mget(...resourceIds.map(key));
        return values.map((value) => value ?? '0').join('.');
      } catch {
        return null;
      }
    },
    async bump(resourceIds) {
      const ids = [...new Set(resourceIds)];
      if (!ids.length) return;
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.incr(key(id)).expire(key(id), 7 * 86_400);
      await pipeline.exec();
    },
  };
}
