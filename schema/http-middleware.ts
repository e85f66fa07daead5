import type { NextFunction, Request, Response } from 'express';

/** Paths of the consumer booking flow, whose CORS preflight the spec documents. */
const CONSUMER_PATH = /^\/(resources|rest\/1\/resources|products|cancel|graphql)(\/|$)/;

export const CORS_HEADERS = {
  'Access-Control-Allow-Credentials': 'true',
  'Access-Control-Allow-Methods': 'POST, GET, OPTIONS, PUT, DELETE',
  'Access-Control-Allow-Headers': 'Origin, X-Requested-With, Content-Type, Accept, Authorization, X-Auth-Token',
  'Access-Control-Max-Age': '36',
} as const;

/**
 * CORS for the consumer endpoints: every answer carries the documented
 * headers and the caller's origin (credentials forbid `*` in browsers);
 * OPTIONS preflights are answered here with 200 and no body.
 */
export function consumerCors(req: Request, res: Response, next: NextFunction): void {
  if (!CONSUMER_PATH.test(req.path)) return next();
  const origin = req.headers.origin;
  res.setHeader('Access-Control-Allow-Origin', typeof origin === 'string' && origin ? origin : '*');
  res.setHeader('Vary', 'Origin');
  for (const [name, value] of Object.entries(CORS_HEADERS)) res.setHeader(name, value);
  if (req.method === 'OPTIONS') {
    res.status(200).end();
    return;
  }
  next();
}

/** Paths of probes and scrapers, which call the pod's own address, not the canonical host. */
const PROBE_PATHS = new Set(['/healthz', '/livez', '/readyz', '/metrics']);

/**
 * Redirects every request for another host to the canonical one with 301
 * (the documented behaviour: the body is lost, so clients must use the
 * canonical host). Off unless CANONICAL_HOST is set; health checks are exempt.
 */
export function canonicalHost(host: string | undefined) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!host || PROBE_PATHS.has(req.path)) return next();
    const requested = (req.headers.host ?? '').toLowerCase();
    if (requested === host.toLowerCase() || requested.split(':')[0] === host.toLowerCase()) return next();
    res.redirect(301, `${req.protocol}://${host}${req.originalUrl}`);
  };
}
