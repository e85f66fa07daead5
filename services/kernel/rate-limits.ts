import type { RedisClient } from './redis.js';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimits } from './config.js';
import { DomainError } from './errors.js';
import type { Context } from './context.js';
import type { Logger } from './logger.js';

/** What a public booking-flow request does, for its limit. */
export type PublicAction = 'listing' | 'reserve' | 'booking';

/** The limits of the public flow as the services see them (absent when they are off). */
export interface PublicLimiter {
  /** Counts one request of `action` on `resourceKey` by `ip`: the IP's overall budget and its budget on that resource. */
  consume(ip: string, action: PublicAction, resourceKey: string): Promise<void>;
  /** Counts one booking for the e-mail address. */
  consumeEmail(email: string): Promise<void>;
}

/** A 429 with the seconds until the caller may try again (REST: `Retry-After`; GraphQL: `extensions.retryAfter`). */
export class RateLimitedError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('RATE_LIMITED', message);
  }
}

const WHAT: Record<PublicAction, string> = {
  listing: 'listing requests',
  reserve: 'reservations',
  booking: 'bookings',
};

/**
 * The Redis-backed counters (rate-limiter-flexible, fixed windows with an
 * atomic INCR + PEXPIRE script), shared by every gateway process of a
 * deployment through `<QUEUE_PREFIX>:rl:*` keys. When Redis does not answer
 * the request is let through (logged): the limits protect the service, an
 * outage of them must not stop bookings.
 */
export function createPublicLimiter(redis: RedisClient, limits: RateLimits, prefix: string, logger: Logger): PublicLimiter | undefined {
  if (!limits.enabled) return undefined;
  const duration = Math.max(1, Math.round(limits.windowMs / 1000));
  const limiter = (name: string, points: number, seconds = duration) =>
    new RateLimiterRedis({ storeClient: redis, keyPrefix: `${prefix}:rl:${name}`, points, duration: seconds, rejectIfRedisNotReady: true });
  const perIp = limiter('ip', limits.perIp);
  const perResource: Record<PublicAction, RateLimiterRedis> = {
    listing: limiter('listing', limits.listing),
    reserve: limiter('reserve', limits.reserve),
    booking: limiter('booking', limits.booking),
  };
  const perEmail = limiter('email', limits.bookingsPerEmail, Math.max(1, Math.round(limits.emailWindowMs / 1000)));

  const take = async (rl: RateLimiterRedis, key: string, message: () => string): Promise<void> => {
    try {
      await rl.consume(key);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        throw new RateLimitedError(message(), Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)));
      }
      logger.warn('rate limit not checked: Redis did not answer', { error: String(rejection) });
    }
  };

  return {
    async consume(ip, action, resourceKey) {
      await take(perIp, ip, () => `Too many requests: at most ${limits.perIp} booking-flow requests per ${duration} s from one client`);
      const key = `${ip}|${resourceKey.trim().toLowerCase().slice(0, 200)}`;
      await take(perResource[action], key, () => `Too many ${WHAT[action]}: at most ${limits[action]} per ${duration} s per client and resource`);
    },
    async consumeEmail(email) {
      await take(perEmail, email.trim().toLowerCase(), () => `Too many bookings for this e-mail address: at most ${limits.bookingsPerEmail} per ${Math.round(limits.emailWindowMs / 1000)} s`);
    },
  };
}

/** Counts a public booking-flow request against the limits, when they are on and the caller's IP is known. */
export async function limitPublic(ctx: Context, action: PublicAction, resourceKey: unknown): Promise<void> {
  if (!ctx.limits || !ctx.clientIp) return;
  await ctx.limits.consume(ctx.clientIp, action, typeof resourceKey === 'string' ? resourceKey : '');
}

/** Counts a booking against the limit of its e-mail address, when the limits are on. */
export async function limitEmail(ctx: Context, email: string): Promise<void> {
  if (!ctx.limits || !ctx.clientIp) return;
  await ctx.limits.consumeEmail(email);
}
