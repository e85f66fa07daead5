import express, { type NextFunction, type Request, type Response } from 'express';
import { findCrmByKey } from '../../services/crm/crm.service.js';
import { type ContextRoot, createContext } from '../../services/kernel/context.js';
import { DomainError, toDomainError } from '../../services/kernel/errors.js';
import { errorBody, type RestResponse, type Route } from './http.js';
import { languageFromCookie, noteCrm, requestIdOf } from '../request-meta.js';
import { clientIpOf } from '../client-ip.js';
import { RateLimitedError } from '../../services/kernel/rate-limits.js';
import { countRejection } from '../../services/kernel/metrics.js';

export const CRM_KEY_HEADER = 'x-service-client-id';

/** Builds the REST facade: one express route per entry of the route table. */
export function restRouter(root: ContextRoot, routes: Route[]): express.Router {
  const router = express.Router();
  for (const route of routes) {
    router[route.method](route.path, async (req: Request, res: Response) => {
      const requestId = requestIdOf(req);
      try {
        const crm = route.auth === 'crm' ? await authenticate(root, req) : null;
        noteCrm(req, crm?.id);
        const ctx = createContext(root, { crm, requestId, language: languageFromCookie(req.headers.cookie), clientIp: clientIpOf(req, root.config.trustProxy) });
        const result = await route.handle(ctx, {
          params: req.params as Record<string, string>,
          query: req.query as Record<string, unknown>,
          body: req.body,
          headers: req.headers,
        });
        await send(req, res, result);
      } catch (error) {
        sendError(root, res, error, requestId);
      }
    });
  }
  return router;
}

/** 401 without a known key; 403 when the key belongs to another CRM than the path names. */
async function authenticate(root: ContextRoot, req: Request) {
  const header = req.headers[CRM_KEY_HEADER];
  const key = Array.isArray(header) ? header[0] : header;
  if (!key) throw new DomainError('UNAUTHENTICATED', 'Missing X-SERVICE-CLIENT-ID header');
  const crm = await findCrmByKey(root.em.fork(), key);
  if (!crm) throw new DomainError('UNAUTHENTICATED', 'Invalid X-SERVICE-CLIENT-ID');
  if (crm.id !== req.params.crmId) throw new DomainError('FORBIDDEN', 'The key does not belong to this CRM');
  return crm;
}

export const HTML_SECURITY_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
} as const;

async function send(req: Request, res: Response, result: RestResponse): Promise<void> {
  res.status(result.status);
  if (result.headers) res.set(result.headers);
  if (result.json !== undefined && result.status !== 204) {
    // As res.json would send it; with an ETag set, express answers If-None-Match with 304 itself.
    res.type('application/json; charset=utf-8');
    if (result.gzipped) {
      res.vary('Accept-Encoding');
      // Only on request: a client without Accept-Encoding gets the plain body (negotiation alone would pick gzip for it).
      if (req.headers['accept-encoding'] && req.acceptsEncodings('gzip', 'identity') === 'gzip') {
        const body = await result.gzipped();
        // One ETag for both: weak, it promises the same content, not the same bytes.
        res.set('Content-Encoding', 'gzip').send(body);
        return;
      }
    }
    res.send(result.json);
  } else if (result.html !== undefined) {
    // The pages behind links in mails (cancel, verify-email): never framed, never sniffed, the token not passed on.
    res.set(HTML_SECURITY_HEADERS);
    res.type('html').send(result.html);
  } else if (result.body === undefined || result.status === 204) {
    res.end();
  } else {
    res.json(result.body);
  }
}

export function sendError(root: ContextRoot, res: Response, error: unknown, requestId: string): void {
  const domainError = toDomainError(error);
  if (domainError.code === 'INTERNAL') {
    root.logger.error('request failed', { requestId, error: error instanceof Error ? error.stack : String(error) });
  }
  countRejection(domainError.status, domainError.code);
  if (res.headersSent) return;
  if (domainError instanceof RateLimitedError) res.setHeader('Retry-After', String(domainError.retryAfterSeconds));
  res.status(domainError.status).json(errorBody(domainError));
}

/** Turns body-parser failures into 400/413 with the documented error body instead of an HTML 500. */
export function bodyErrorHandler(root: ContextRoot) {
  return (error: unknown, req: Request, res: Response, next: NextFunction): void => {
    const type = (error as { type?: string } | null)?.type;
    if (type === 'entity.parse.failed') {
      sendError(root, res, new DomainError('VALIDATION_FAILED', bodyParseMessage(error)), requestIdOf(req));
    } else if (type === 'entity.too.large') {
      sendError(root, res, new DomainError('PAYLOAD_TOO_LARGE', 'Request body too large'), requestIdOf(req));
    } else if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
      sendError(root, res, new DomainError('VALIDATION_FAILED', 'Unsupported request body encoding'), requestIdOf(req));
    } else if (isClientHttpError(error)) {
      // E.g. the router's 400 for a path parameter that is not valid percent-encoding.
      const code = error.status === 404 ? 'NOT_FOUND' : error.status === 413 ? 'PAYLOAD_TOO_LARGE' : 'VALIDATION_FAILED';
      // The router's decoding failure is a URIError without `expose`: named, without echoing the path.
      const message = error.expose && error.message ? error.message : error instanceof URIError ? 'Malformed percent-encoding in the URL path' : 'Bad request';
      sendError(root, res, new DomainError(code, message), requestIdOf(req));
    } else if (error) {
      sendError(root, res, error, requestIdOf(req));
    } else {
      next();
    }
  };
}

/**
 * Why a JSON body was refused. The parser's strict mode takes only an object
 * or an array, so a bare value such as `null` or `"x"` is valid JSON that
 * no endpoint accepts: said as such, not called malformed.
 */
function bodyParseMessage(error: unknown): string {
  const body = (error as { body?: unknown } | null)?.body;
  if (typeof body === 'string') {
    try {
      JSON.parse(body);
      return 'The JSON request body must be an object';
    } catch {
      // Not JSON at all.
    }
  }
  return 'Malformed JSON in request body';
}

/** An http-errors style error (express, body-parser, router) that blames the request, not the service. */
function isClientHttpError(error: unknown): error is { status: number; message?: string; expose?: boolean } {
  if (error instanceof DomainError) return false;
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}
