import { randomUUID, timingSafeEqual } from 'node:crypto';
import cluster from 'node:cluster';
import type { IncomingMessage } from 'node:http';
import type { ApolloServerPlugin } from '@apollo/server';
import type { NextFunction, Request, Response } from 'express';
import { Kind, type OperationDefinitionNode } from 'graphql';
import client from 'prom-client';
import type { Logger } from '../services/kernel/logger.js';
import { countRejection, metrics, metricsText } from '../services/kernel/metrics.js';
import { crmIdOf, requestIdOf } from './request-meta.js';

/** Paths probes and scrapers call every few seconds: their access lines are debug, not info. */
const QUIET_PATHS = new Set(['/livez', '/readyz', '/healthz', '/metrics']);

/** The route pattern of a request (`/crms/:crmId/user`), never the raw path, so metrics keep few label values. */
export function routeOf(req: Request): string {
  const pattern = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof pattern === 'string') return `${req.baseUrl}${pattern}` || '/';
  if (req.baseUrl) return req.baseUrl;
  return 'unmatched';
}

/**
 * First middleware of the gateway: takes the caller's X-Request-Id (or makes
 * one) and echoes it, and when the answer is sent writes one access line
 * (method, route pattern, status, duration, request id, CRM) and observes
 * the HTTP duration histogram.
 */
export function requestObservability(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    const requestId = requestIdOf(req);
    res.setHeader('X-Request-Id', requestId);
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = routeOf(req);
      const status = res.statusCode;
      metrics.httpDuration.observe({ method: req.method, route, status: String(status) }, seconds);
      const crmId = crmIdOf(req);
      const line = { requestId, ...(crmId ? { crmId } : {}), method: req.method, route, status, durationMs: Math.round(seconds * 10_000) / 10 };
      if (QUIET_PATHS.has(req.path)) logger.debug('request', line);
      else logger.info('request', line);
    });
    next();
  };
}

/** Times every GraphQL operation over HTTP by operation type, root field and outcome (ok, or the first error's code). */
export function graphqlMetricsPlugin(): ApolloServerPlugin {
  return {
    async requestDidStart() {
      const started = process.hrtime.bigint();
      return {
        async willSendResponse({ operation, errors, response }) {
          const seconds = Number(process.hrtime.bigint() - started) / 1e9;
          const executionErrors = response.body.kind === 'single' ? response.body.singleResult.errors : undefined;
          const first = errors?.[0]?.extensions?.code ?? executionErrors?.[0]?.extensions?.code;
          // Apollo sets the operation only once the document parsed and validated: a client cannot invent label values.
          const field = operation ? rootField(operation) : 'invalid';
          metrics.graphqlDuration.observe({ operation: operation?.operation ?? 'invalid', field, status: first ? String(first) : 'ok' }, seconds);
          for (const error of executionErrors ?? []) {
            const status = Number(error.extensions?.status);
            if (status) countRejection(status, String(error.extensions?.code ?? status));
          }
        },
      };
    },
  };
}

const rootField = (operation: OperationDefinitionNode | undefined): string => {
  const selection = operation?.selectionSet.selections[0];
  return selection?.kind === Kind.FIELD ? selection.name.value : 'unknown';
};

/** Constant-time comparison of a presented secret with the configured one. */
function sameSecret(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** `Authorization: Bearer <token>`, or Basic with the token as password (what a browser can send). */
export function presentsToken(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? '';
  const [scheme, value = ''] = header.split(' ', 2);
  if (/^bearer$/i.test(scheme ?? '')) return sameSecret(value.trim(), token);
  if (/^basic$/i.test(scheme ?? '')) {
    const decoded = Buffer.from(value.trim(), 'base64').toString('utf8');
    return sameSecret(decoded.slice(decoded.indexOf(':') + 1), token);
  }
  return false;
}

const METRICS_REQUEST = 'booking:metrics';
const METRICS_ANSWER = 'booking:metrics-answer';

/** In a gateway started by `npm start` (a node:cluster worker): prom-client answers the supervisor's aggregation requests. */
if (cluster.isWorker) new client.AggregatorRegistry();

/**
 * Under `npm start` the gateways share one port, so a scrape reaches any one
 * of them: ask the supervisor for the sum over every gateway process (plus
 * its own restart counter). A lone gateway answers its own metrics.
 */
async function gatewayMetrics(): Promise<{ contentType: string; text: string }> {
  if (!cluster.isWorker || !process.send) return metricsText();
  const id = randomUUID();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error('the supervisor did not answer within 6 s')), 6000);
    const onMessage = (message: unknown) => {
      const answer = message as { type?: string; id?: string; text?: string; error?: string };
      if (answer?.type !== METRICS_ANSWER || answer.id !== id) return;
      done(answer.error ? new Error(answer.error) : undefined, answer.text);
    };
    function done(error?: Error, text?: string) {
      clearTimeout(timer);
      process.off('message', onMessage);
      if (error) reject(error);
      else resolve({ contentType: client.register.contentType, text: text ?? '' });
    }
    process.on('message', onMessage);
    process.send!({ type: METRICS_REQUEST, id });
  });
}

/** What the supervisor does with a gateway's METRICS_REQUEST: aggregate every gateway and add `own` (its own registry's text). */
export function answerMetricsRequests(own: () => Promise<string>): void {
  const aggregator = new client.AggregatorRegistry();
  cluster.on('message', (worker, message: { type?: string; id?: string }) => {
    if (message?.type !== METRICS_REQUEST) return;
    Promise.all([aggregator.clusterMetrics(), own()]).then(
      ([gateways, supervisor]) => worker.send({ type: METRICS_ANSWER, id: message.id, text: `${gateways}\n${supervisor}` }),
      (error: Error) => worker.send({ type: METRICS_ANSWER, id: message.id, error: error.message }),
    );
  });
}

/** GET /metrics: Prometheus text; with METRICS_TOKEN set, only for a caller who presents it. */
export function metricsEndpoint(token: string | undefined, collect: () => Promise<{ contentType: string; text: string }> = gatewayMetrics) {
  return async (req: Request, res: Response): Promise<void> => {
    if (token && !presentsToken(req, token)) {
      res.status(401).set('WWW-Authenticate', 'Bearer realm="metrics"').json({ error: 'METRICS_TOKEN required: Authorization: Bearer <token>' });
      return;
    }
    try {
      const { contentType, text } = await collect();
      res.status(200).type(contentType).send(text);
    } catch (error) {
      res.status(503).json({ error: `metrics unavailable: ${error instanceof Error ? error.message : String(error)}` });
    }
  };
}
