import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { QUEUES } from '../services/kernel/jobs.js';

/** Retry policy per queue: mails back off exponentially; hold expiry retries quickly. */
const DEFAULT_JOB_OPTIONS = {
  [QUEUES.mail]: { attempts: 8, backoff: { type: 'exponential', delay: 2000 } },
  [QUEUES.holdExpiry]: { attempts: 10, backoff: { type: 'fixed', delay: 1000 } },
} as const;

/** One BullMQ Queue per queue name, sharing a connection. */
export function createQueues(connection: Redis, prefix: string): Record<string, Queue> {
  return Object.fromEntries(
    Object.values(QUEUES).map((name) => [
      name,
      new Queue(name, {
        connection,
        prefix,
        defaultJobOptions: {
          ...DEFAULT_JOB_OPTIONS[name],
          removeOnComplete: { age: 7 * 24 * 3600, count: 10_000 },
          removeOnFail: { age: 30 * 24 * 3600 },
        },
      }),
    ]),
  );
}
