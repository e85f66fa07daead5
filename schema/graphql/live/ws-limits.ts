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
 * Open WebSocket connections per client IP and in total, for this process:
 * a socket costs memory here, whichever gateway the others are on. `open`
 * `check` is asked at the upgrade, `opened` and `closed` follow the socket.
 */
export class OpenConnections {
  private readonly perIp = new Map<string, number>();
  private total = 0;

  constructor(private readonly limits: { maxConnectionsPerIp: number; maxConnections: number }) {}

  /** Whether one more connection of `ip` fits, or which cap it would break. */
  check(ip: string): 'ok' | 'ip' | 'process' {
    if (this.total >= this.limits.maxConnections) return 'process';
    if ((this.perIp.get(ip) ?? 0) >= this.limits.maxConnectionsPerIp) return 'ip';
    return 'ok';
  }

  /** Counts an established connection (until `closed`). */
  opened(ip: string): void {
    this.perIp.set(ip, (this.perIp.get(ip) ?? 0) + 1);
    this.total++;
  }

  closed(ip: string): void {
    const count = this.perIp.get(ip) ?? 0;
    if (count <= 1) this.perIp.delete(ip);
    else this.perIp.set(ip, count - 1);
    this.total = Math.max(0, this.total - 1);
  }

  get size(): number {
    return this.total;
  }
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
