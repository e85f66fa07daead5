import 'reflect-metadata';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import express from 'express';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { Redis } from 'ioredis';
import { WebSocketServer } from 'ws';
import { findCrmByKey } from '../services/crm/crm.service.js';
import type { Clock } from '../services/kernel/clock.js';
import type { Config } from '../services/kernel/config.js';
import { type ContextRoot, createContext } from '../services/kernel/context.js';
import { DomainError } from '../services/kernel/errors.js';
import { redisCalendarVersions } from '../services/kernel/calendar-version.js';
import { checkHealth } from '../services/kernel/health.js';
import type { Logger } from '../services/kernel/logger.js';
import type { Orm } from '../services/kernel/orm.js';
import { apiDocsRouter } from './api-docs.js';
import { buildGraphqlSchema } from './graphql/build-schema.js';
import { formatGraphqlError } from './graphql/format-error.js';
import { createRedisPubSub, LiveHub, type LiveContext } from './graphql/live/live-hub.js';
import { clientIp, ConnectionRateLimiter, subscriptionCapError } from './graphql/live/ws-limits.js';
import { canonicalHost, consumerCors } from './http-middleware.js';
import { languageFromCookie, requestIdOf } from './request-meta.js';
import { ROUTES } from './rest/routes.js';
import { bookingPageRouter } from './web/booking-page.routes.js';
import { bodyErrorHandler, CRM_KEY_HEADER, restRouter, sendError } from './rest/router.js';

export interface GatewayDeps {
  config: Config;
  orm: Orm;
  redis: Redis;
  clock: Clock;
  logger: Logger;
}

export interface Gateway {
  server: Server;
  schema: GraphQLSchema;
  listen(port: number, host?: string): Promise<number>;
  close(): Promise<void>;
}

/** Keys a WebSocket client may use in `connectionParams` to pass the CRM key. */
const CONNECTION_PARAM_KEYS = ['X-SERVICE-CLIENT-ID', 'x-service-client-id', 'serviceClientId'];

/** Assembles the gateway: REST facade, GraphQL over HTTP and WebSocket, health. */
export async function createGateway(deps: GatewayDeps): Promise<Gateway> {
  const { orm, redis, logger } = deps;
  const calendar = redisCalendarVersions(redis, deps.config.queuePrefix);
  const root: ContextRoot = { em: orm.em, clock: deps.clock, config: deps.config, logger, calendar };
  // Live updates: Redis pub/sub fed by the worker's outbox relay, read by every gateway.
  const live = createRedisPubSub(deps.config.redisUrl, logger);
  const hub = new LiveHub(live.pubSub, deps.clock, { coalesceMs: deps.config.liveCoalesceMs });
  const schema = await buildGraphqlSchema(live.pubSub);
  const app = express();
  const server = createServer(app);
  app.disable('x-powered-by');
  app.set('trust proxy', true);

  const formatError = formatGraphqlError(logger);
  const connectionRate = new ConnectionRateLimiter(deps.config.wsConnectionRate);
  const wsServer = new WebSocketServer({
    server,
    path: '/graphql',
    verifyClient: (info, accept) => {
      const ip = clientIp(info.req);
      if (connectionRate.allow(ip)) return accept(true);
      accept(false, 429, 'Too Many Requests', { 'Retry-After': String(connectionRate.retryAfterSeconds(ip)) });
    },
  });
  const wsCleanup = useServer(
    {
      schema,
      onSubscribe: (ctx) => subscriptionCapError(Object.keys(ctx.subscriptions).length, deps.config.wsMaxSubscriptions),
      onConnect: async (socket) => {
        const key = keyFromConnectionParams(socket.connectionParams);
        if (key && !(await findCrmByKey(orm.em.fork(), key))) return false;
        return true;
      },
      context: async (socket) => {
        const key = keyFromConnectionParams(socket.connectionParams);
        const crm = key ? await findCrmByKey(orm.em.fork(), key) : null;
        const context: LiveContext = { ...createContext(root, { crm }), live: hub };
        return context;
      },
      // graphql-ws does not run Apollo's formatError; map errors the same way so WebSocket
      // clients also get the DomainError code in extensions.code and no internal details.
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors?.length ? { ...result, errors: result.errors.map((error) => formatError(error.toJSON(), error)) } : undefined,
      onError: (_ctx, _id, _payload, errors) => errors.map((error) => formatError(error.toJSON(), error)),
    },
    wsServer,
  );

  const apollo = new ApolloServer({
    schema,
    formatError,
    includeStacktraceInErrorResponses: !deps.config.production,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer: server }),
      { serverWillStart: async () => ({ drainServer: async () => void (await wsCleanup.dispose()) }) },
    ],
  });
  await apollo.start();

  app.use(canonicalHost(deps.config.canonicalHost));
  app.use(consumerCors);

  app.get('/healthz', async (_req, res) => {
    const report = await checkHealth(orm, redis);
    // The pid tells which gateway process answered when several share the port (npm start).
    res.status(report.ok ? 200 : 503).json({ ...report, pid: process.pid });
  });

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
        if (key && !crm) {
          throw new GraphQLError('Invalid X-SERVICE-CLIENT-ID', { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } });
        }
        return createContext(root, { crm, requestId: requestIdOf(req), language: languageFromCookie(req.headers.cookie) });
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
      await apollo.stop();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
      live.close();
    },
  };
}

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
