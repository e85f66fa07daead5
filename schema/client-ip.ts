import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** `::ffff:127.0.0.1` (an IPv4 peer on a dual-stack socket) as `127.0.0.1`. */
function normalise(address: string | undefined): string | undefined {
  if (!address) return undefined;
  const trimmed = address.trim();
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(trimmed) ? trimmed.slice(7) : trimmed;
}

/**
 * The client's IP as far as the gateway can trust it. With `trustedHops` 0
 * (TRUST_PROXY, the default) it is the socket's peer and X-Forwarded-For is
 * not read at all, so a client cannot change its IP by sending the header.
 * With N trusted proxies in front, the address N hops back: the entries a
 * client put at the left of the header are never reached (as express's
 * `trust proxy` with a hop count). Used by the REST facade, GraphQL and the
 * WebSocket limits alike.
 */
export function clientIpOf(req: IncomingMessage, trustedHops: number): string {
  const peer = normalise(req.socket?.remoteAddress) ?? 'unknown';
  if (trustedHops <= 0) return peer;
  const header = req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((entry) => normalise(entry))
    .filter((entry): entry is string => Boolean(entry));
  // Nearest first: the peer (our proxy), then what each proxy appended, right to left.
  const chain = [peer, ...forwarded.reverse()];
  const candidate = chain[Math.min(trustedHops, chain.length - 1)]!;
  return isIP(candidate) ? candidate : peer;
}
