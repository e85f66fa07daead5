import 'reflect-metadata';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import express from 'express';
import { GraphQLError, type GraphQLSchema, specifiedRules, validate } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { findCrmByKey } from '../services/crm/crm.service.js';
import type { Clock } from '../services/kernel/clock.js';
import type { Config } from '../services/kernel/config.js';
import { type ContextRoot, createContext } from '../services/kernel/context.js';
import { DomainError } from '../services/kernel/errors.js';
import { redisCalendarVersions } from '../services/kernel/calendar-version.js';
import { checkHealth } from '../services/kernel/health.js';
import { createPublicLimiter } from '../services/kernel/rate-limits.js';
import type { Logger } from '../services/kernel/logger.js';
import { addGaugeSource, countRejection } from '../services/kernel/metrics.js';
import type { Orm } from '../services/kernel/orm.js';
import { apiDocsRouter } from './api-docs.js';
import type { RedisClient } from '../services/kernel/redis.js';
import { buildGraphqlSchema } from './graphql/build-schema.js';
import { formatGraphqlError, withRequestErrorCode } from './graphql/format-error.js';
import { subscribeSharingResults } from './graphql/live/shared-execution.js';
import { createRedisPubSub, LiveHub, type LiveContext } from './graphql/live/live-hub.js';
import { ConnectionRateLimiter, OpenConnections, subscriptionCapError } from './graphql/live/ws-limits.js';
import { clientIpOf } from './client-ip.js';
import { canonicalHost, consumerCors } from './http-middleware.js';
import { graphqlMetricsPlugin, metricsEndpoint, requestObservability } from './observability.js';
import { languageFromCookie, noteCrm, requestIdOf } from './request-meta.js';
import { ROUTES } from './rest/routes.js';
import { bookingPageRouter } from './web/booking-page.routes.js';
import { bodyErrorHandler, CRM_KEY_HEADER, restRouter, sendError } from './rest/router.js';

export interface GatewayDeps {
  config: Config;
  orm: Orm;
  redis: RedisClient;
  clock: Clock;
  logger: Logger;
}

export interface Gateway {
  server: Server;
  schema: GraphQLSchema;
  listen(port: number, host?: string): Promise<number>;
  /** /readyz answers 503 from the first moment on; after SHUTDOWN_DELAY_MS the server drains and closes. */
  close(): Promise<void>;
}

/** Keys a WebSocket client may use in `connectionParams` to pass the CRM key. */
const CONNECTION_PARAM_KEYS = ['X-SERVICE-CLIENT-ID', 'x-service-client-id', 'serviceClientId'];

/** Assembles the gateway: REST facade, GraphQL over HTTP and WebSocket, health, metrics, queue dashboard. */
export async function createGateway(deps: GatewayDeps): Promise<Gateway> {
  const { orm, redis, logger } = deps;
  const calendar = redisCalendarVersions(redis, deps.config.queuePrefix);
  // The public flow's limits (Redis, shared by every gateway); undefined when PUBLIC_RATE_LIMIT=off.
  const limits = createPublicLimiter(redis, deps.config.rateLimits, deps.config.queuePrefix, logger);
  const root: ContextRoot = { em: orm.em, clock: deps.clock, config: deps.config, logger, calendar, limits };
  const ipOf = (req: IncomingMessage) => clientIpOf(req, deps.config.trustProxy);
  // Live updates: Redis pub/sub fed by the worker's outbox relay, read by every gateway.
  const live = createRedisPubSub(deps.config, deps.config.queuePrefix, logger);
  const hub = new LiveHub(live.events, deps.clock, { coalesceMs: deps.config.liveCoalesceMs });
  const schema = await buildGraphqlSchema(live.pubSub);
  const app = express();
  const server = createServer(app);
  app.disable('x-powered-by');
  // X-Forwarded-For is read only behind TRUST_PROXY trusted proxies (a hop count, as express understands it).
  app.set('trust proxy', deps.config.trustProxy);
  let shuttingDown = false;

  const formatError = formatGraphqlError(logger);
  // Depth, cost, aliases, directives and tokens of a document are bounded, and field suggestions
  // ("Did you mean …?") are off: a rejected document answers 400 before anything runs.
  const gl = deps.config.graphqlLimits;
  const armor = new ApolloArmor({
    maxDepth: { n: gl.maxDepth },
    costLimit: { maxCost: gl.maxCost },
    maxAliases: { n: gl.maxAliases },
    maxDirectives: { n: gl.maxDirectives },
    // Tokens are bounded by graphql-js's own parser option below (armor's Apollo plugin answers 500).
    maxTokens: { enabled: false },
    blockFieldSuggestion: { enabled: true },
  }).protect();

  const connectionRate = new ConnectionRateLimiter(deps.config.wsConnectionRate);
  const openConnections = new OpenConnections(deps.config.wsLimits);
  const wsServer = new WebSocketServer({
    server,
    path: '/graphql',
    // A bigger message closes the connection with 1009 (Message Too Big) before it is parsed.
    maxPayload: deps.config.wsLimits.maxPayloadBytes,
    verifyClient: (info, accept) => {
      const ip = ipOf(info.req);
      const open = openConnections.check(ip);
      if (open === 'process') return accept(false, 503, 'Service Unavailable', { 'Retry-After': '5' });
      if (open === 'ip') {
        countRejection(429, 'RATE_LIMITED');
        return accept(false, 429, 'Too Many Requests', { 'Retry-After': '5' });
      }
      if (connectionRate.allow(ip)) return accept(true);
      countRejection(429, 'RATE_LIMITED');
      accept(false, 429, 'Too Many Requests', { 'Retry-After': String(connectionRate.retryAfterSeconds(ip)) });
    },
  });
  wsServer.on('connection', (socket, req) => {
    const ip = ipOf(req);
    openConnections.opened(ip);
    socket.once('close', () => openConnections.closed(ip));
  });
  // graphql-ws contexts of open connections, whose `subscriptions` the gauge counts when scraped.
  const wsContexts = new Set<{ subscriptions: Record<string, unknown> }>();
  const removeGauges = addGaugeSource(() => [
    { name: 'booking_websocket_connections', value: wsServer.clients.size },
    { name: 'booking_websocket_subscriptions', value: [...wsContexts].reduce((sum, ctx) => sum + Object.keys(ctx.subscriptions).length, 0) },
  ]);
  const wsCleanup = useServer(
    {
      schema,
      // capacityChanged goes to many subscribers with the same query: execute it once per change and query.
      subscribe: subscribeSharingResults(new Set(['capacityChanged'])),
      // The same document limits over WebSocket (the message size bounds its tokens).
      validate: (schema, document) => validate(schema, document, [...specifiedRules, ...armor.validationRules]),
      onSubscribe: (ctx) => {
        const refused = subscriptionCapError(Object.keys(ctx.subscriptions).length, deps.config.wsMaxSubscriptions);
        if (refused) countRejection(429, 'RATE_LIMITED');
        return refused;
      },
      onConnect: async (socket) => {
        const key = keyFromConnectionParams(socket.connectionParams);
        if (key && !(await findCrmByKey(orm.em.fork(), key))) return false;
        wsContexts.add(socket);
        return true;
      },
      onClose: (socket) => void wsContexts.delete(socket),
      context: async (socket) => {
        const key = keyFromConnectionParams(socket.connectionParams);
        const crm = key ? await findCrmByKey(orm.em.fork(), key) : null;
        const context: LiveContext = { ...createContext(root, { crm, clientIp: ipOf(socket.extra.request) }), live: hub };
        return context;
      },
      // graphql-ws does not run Apollo's formatError; map errors the same way so WebSocket
      // clients also get the DomainError code in extensions.code and no internal details.
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors?.length ? { ...result, errors: result.errors.map((error) => withRequestErrorCode(formatError(error.toJSON(), error))) } : undefined,
      onError: (_ctx, _id, _payload, errors) => errors.map((error) => withRequestErrorCode(formatError(error.toJSON(), error))),
    },
    wsServer,
  );

  const apollo = new ApolloServer({
    schema,
    formatError,
    // No stack traces in any answer, in development either (they name files and SQL); the log has them.
    includeStacktraceInErrorResponses: false,
    introspection: !deps.config.production,
    allowBatchedHttpRequests: false,
    // The process stops Apollo itself (onShutdown, through close below). Apollo's own handler would stop it and then
    // raise the signal again, which a graceful shutdown takes for a second Ctrl-C: exit code 1. Off under NODE_ENV=test
    // by Apollo's default, hence explicit.
    stopOnTerminationSignals: false,
    parseOptions: { maxTokens: gl.maxTokens },
    validationRules: armor.validationRules,
    plugins: [
      // graphql-armor types its plugins against the CommonJS build of @apollo/server; they are plain objects.
      ...(armor.plugins as unknown as ApolloServerPlugin[]),
      rateLimitedStatus,
      ApolloServerPluginDrainHttpServer({ httpServer: server }),
      graphqlMetricsPlugin(),
      { serverWillStart: async () => ({ drainServer: async () => void (await wsCleanup.dispose()) }) },
    ],
  });
  await apollo.start();

  app.use(requestObservability(logger));
  app.use(canonicalHost(deps.config.canonicalHost));
  app.use(consumerCors);

  // Liveness: the process serves HTTP. No dependency is asked, so a Redis or PostgreSQL blip restarts nothing.
  app.get('/livez', (_req, res) => void res.status(200).json({ ok: true, pid: process.pid }));
  // Readiness: PostgreSQL and Redis answer, and the gateway is not shutting down (503 from the first moment of it).
  app.get('/readyz', async (_req, res) => {
    if (shuttingDown) return void res.status(503).json({ ok: false, shuttingDown: true, pid: process.pid });
    const report = await checkHealth(orm, redis);
    res.status(report.ok && !shuttingDown ? 200 : 503).json({ ...report, ...(shuttingDown ? { ok: false, shuttingDown: true } : {}), pid: process.pid });
  });
  app.get('/healthz', async (_req, res) => {
    const report = await checkHealth(orm, redis, logger);
    // The pid tells which gateway process answered when several share the port (npm start).
    res.status(report.ok ? 200 : 503).json({ ...report, pid: process.pid });
  });
  app.get('/metrics', metricsEndpoint(deps.config.metricsToken));
  // bull-board (and its UI) is loaded only where the dashboard is on.
  const admin = deps.config.adminToken ? (await import('./admin-queues.js')).adminQueues(deps.config, redis) : undefined;
  if (admin) app.use('/admin/queues', admin.router);

  // The consumer booking page, its browser files and the embed script (issue 15).
  app.use(bookingPageRouter(root));
  app.use(apiDocsRouter(deps.config, ROUTES));

  // Every body is read as JSON, also when a client forgets the Content-Type header (curl -d sends a form type).
  // Multipart is not part of the API, and an empty body stays absent so the answer says "body is required".
  const jsonBody = (req: IncomingMessage) => req.headers['content-length'] !== '0' && !/^multipart\//i.test(String(req.headers['content-type'] ?? ''));
  app.use(express.json({ limit: '1mb', type: jsonBody }));
  app.use(bodyErrorHandler(root));

  app.use(
    '/graphql',
    expressMiddleware(apollo, {
      context: async ({ req }) => {
        const header = req.headers[CRM_KEY_HEADER];
        const key = Array.isArray(header) ? header[0] : header;
        const crm = key ? await findCrmByKey(orm.em.fork(), key) : null;
        noteCrm(req, crm?.id);
        if (key && !crm) {
          throw new GraphQLError('Invalid X-SERVICE-CLIENT-ID', { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } });
        }
        return createContext(root, { crm, requestId: requestIdOf(req), language: languageFromCookie(req.headers.cookie), clientIp: ipOf(req) });
      },
    }),
  );

  app.use(restRouter(root, ROUTES));
  app.use((req, res) => sendError(root, res, new DomainError('NOT_FOUND', `No endpoint ${req.method} ${req.path}`), requestIdOf(req)));
  app.use(bodyErrorHandler(root));

  return {
    server,
    schema,
    listen: (port, host = '0.0.0.0') =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const address = server.address();
          resolve(typeof address === 'object' && address ? address.port : port);
        });
      }),
    close: async () => {
      shuttingDown = true;
      if (deps.config.shutdownDelayMs) await new Promise((resolve) => setTimeout(resolve, deps.config.shutdownDelayMs));
      removeGauges();
      await apollo.stop();
      await admin?.close();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
      live.close();
    },
  };
}

/**
 * An operation refused by the public flow's limits answers 429 with
 * Retry-After, as its REST twin does (the errors carry RATE_LIMITED and
 * `extensions.retryAfter`). Not when another field of the request has data
 * (several mutations, one of them limited): that answer carries results the
 * client must read, so it stays 200 with the errors, as GraphQL over HTTP
 * answers partial results.
 */
const rateLimitedStatus: ApolloServerPlugin = {
  requestDidStart: async () => ({
    willSendResponse: async ({ response }) => {
      if (response.body.kind !== 'single') return;
      const { data, errors } = response.body.singleResult;
      const limited = errors?.filter((error) => error.extensions?.code === 'RATE_LIMITED') ?? [];
      if (!limited.length) return;
      if (data && Object.values(data).some((value) => value !== null && value !== undefined)) return;
      const seconds = Math.max(...limited.map((error) => Number(error.extensions?.retryAfter ?? 1)));
      response.http.status = 429;
      response.http.headers.set('retry-after', String(seconds));
    },
  }),
};

function keyFromConnectionParams(params: Record<string, unknown> | undefined): string | undefined {
  if (!params) return undefined;
  for (const name of CONNECTION_PARAM_KEYS) {
    const value = params[name];
    if (typeof value === 'string' && value) return value;
  }
  const headers = params.headers as Record<string, unknown> | undefined;
  const nested = headers?.[CRM_KEY_HEADER] ?? headers?.['X-SERVICE-CLIENT-ID'];
  return typeof nested === 'string' ? nested : undefined;
}
