import type { IncomingMessage } from 'node:http';
import { GraphQLError } from 'graphql';

/**
 * Limits of the WebSocket endpoint. Both are per gateway process and keep
 * their counters in its memory on purpose: they protect this process's
 * sockets and memory, so nothing has to be shared between gateways. Behind
 * a load balancer with N gateways a client can open up to N times the
 * per-IP rate in total; the balancer's own limits cover the whole fleet.
 */

/**
 * Fixed-window counter of new connections per client IP. Expired windows
 * are swept when the table grows, so it holds at most the IPs of one window.
 */
export class ConnectionRateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limit: { max: number; windowMs: number },
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts a connection attempt of `ip`; false when the IP is over its limit in the current window. */
  allow(ip: string): boolean {
    const now = this.now();
    let window = this.windows.get(ip);
    if (!window || window.resetAt <= now) {
      if (this.windows.size >= 10_000) this.sweep(now);
      window = { count: 0, resetAt: now + this.limit.windowMs };
      this.windows.set(ip, window);
    }
    window.count++;
    return window.count <= this.limit.max;
  }

  /** Seconds until the IP may connect again (for Retry-After). */
  retryAfterSeconds(ip: string): number {
    const window = this.windows.get(ip);
    return window ? Math.max(1, Math.ceil((window.resetAt - this.now()) / 1000)) : 1;
  }

  private sweep(now: number): void {
    for (const [ip, window] of this.windows) if (window.resetAt <= now) this.windows.delete(ip);
  }
}

/**
 * The client's IP as express sees it with `trust proxy` on (the gateway runs
 * behind a proxy): the first X-Forwarded-For entry, else the socket's peer.
 */
export function clientIp(req: IncomingMessage): string {
  const header = req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header[0] : header)?.split(',')[0]?.trim();
  return forwarded || req.socket.remoteAddress || 'unknown';
}

/**
 * The error a subscribe message gets when its connection already runs
 * `max` operations. graphql-ws registers the new operation before asking,
 * so `open` includes it.
 */
export function subscriptionCapError(open: number, max: number): GraphQLError[] | undefined {
  if (open <= max) return undefined;
  return [
    new GraphQLError(`At most ${max} subscriptions per connection; complete one or open another connection`, {
      extensions: { code: 'RATE_LIMITED', status: 429 },
    }),
  ];
}
