import { Queue } from 'bullmq';
import type { RedisClient } from '../services/kernel/redis.js';
import { QUEUES } from '../services/kernel/jobs.js';

export interface RetryPolicy {
  attempts: number;
  /** First back-off delay; it doubles with each further attempt. */
  delayMs: number;
}

/**
 * Mails: 8 attempts, exponential back-off from 2 s (2, 4, 8, ... 128 s: about
 * four minutes before a mail counts as FAILED). Hold expiry retries quickly.
 */
export const MAIL_RETRY: RetryPolicy = { attempts: 8, delayMs: 2000 };

/**
 * Webhooks: 13 attempts, exponential back-off from 30 s (30 s, 1 min, 2 min,
 * ... 17 h): the last attempt comes about 34 hours after the first.
 */
export const WEBHOOK_RETRY: RetryPolicy = { attempts: 13, delayMs: 30_000 };

/** One BullMQ Queue per queue name, sharing a connection. */
export function createQueues(connection: RedisClient, prefix: string, overrides: { mail?: RetryPolicy; webhook?: RetryPolicy } = {}): Record<string, Queue> {
  const mail = overrides.mail ?? MAIL_RETRY;
  const webhook = overrides.webhook ?? WEBHOOK_RETRY;
  const jobOptions = {
    [QUEUES.mail]: { attempts: mail.attempts, backoff: { type: 'exponential', delay: mail.delayMs } },
    [QUEUES.webhook]: { attempts: webhook.attempts, backoff: { type: 'exponential', delay: webhook.delayMs } },
    [QUEUES.holdExpiry]: { attempts: 10, backoff: { type: 'fixed', delay: 1000 } },
    // A failed maintenance run is simply the next interval's work.
    [QUEUES.maintenance]: { attempts: 1 },
  } as const;
  return Object.fromEntries(
    Object.values(QUEUES).map((name) => {
      const queue = new Queue(name, {
        connection,
        prefix,
        defaultJobOptions: {
          ...jobOptions[name],
          removeOnComplete: name === QUEUES.maintenance ? { count: 1000 } : { age: 7 * 24 * 3600, count: 10_000 },
          removeOnFail: { age: 30 * 24 * 3600 },
        },
      });
      // Connection errors during a Redis outage surface where the queue is used (the relay logs and retries);
      // without a listener BullMQ prints every reconnect attempt to stderr.
      queue.on('error', () => undefined);
      return [name, queue];
    }),
  );
}
