import { availableParallelism } from 'node:os';
import { z } from 'zod';

/** Log levels understood by the gateway and the worker, most verbose first. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Pool size and per-connection limits of each process's PostgreSQL pool when nothing is configured. */
export const DEFAULT_DATABASE_POOL: DatabasePool = { max: 4, statementTimeoutMs: 30_000, idleInTransactionTimeoutMs: 60_000, preparedStatements: true };

const urlWithProtocol = (protocols: string[]) =>
  z.string().refine((value) => {
    try {
      return protocols.includes(new URL(value).protocol);
    } catch {
      return false;
    }
  }, `must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`);

/** Node flags separated by spaces, each starting with `-` (passed as they are, never through a shell). */
const nodeArgs = z
  .string()
  .optional()
  .transform((value) => (value ?? '').split(/\s+/).filter(Boolean))
  .refine((args) => args.every((arg) => arg.startsWith('-')), 'must be node flags separated by spaces, e.g. --cpu-prof --cpu-prof-dir=/tmp/profiles');

/** Boolean settings: true/false/1/0 in any case. */
const flag = z
  .string()
  .regex(/^(true|false|1|0)$/i, 'must be true or false')
  .transform((value) => /^(true|1)$/i.test(value));

/**
 * A BullMQ key prefix: letters, digits, - and _, with at most one Redis
 * Cluster hash tag (`{booking}`, `staging{booking}`), which keeps every key of
 * a deployment in one cluster slot as BullMQ's Lua scripts need.
 */
export const QUEUE_PREFIX_PATTERN = /^[A-Za-z0-9_-]*(\{[A-Za-z0-9_-]+\})?[A-Za-z0-9_-]*$/;

/** `host:port` pairs separated by commas (REDIS_CLUSTER_NODES). */
const clusterNodes = z.string().transform((value, ctx) => {
  const nodes = value.split(',').map((part) => part.trim()).filter(Boolean).map((part) => {
    const match = /^([^\s:]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$/.exec(part);
    return match && Number(match[2]) <= 65535 ? { host: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2]) } : undefined;
  });
  if (!nodes.length || nodes.some((node) => !node)) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must be host:port pairs separated by commas' });
    return z.NEVER;
  }
  return nodes as { host: string; port: number }[];
});

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  DATABASE_URL: urlWithProtocol(['postgres:', 'postgresql:']).default('postgresql://postgres@127.0.0.1:5432/booking'),
  DIRECT_DATABASE_URL: urlWithProtocol(['postgres:', 'postgresql:']).optional(),
  DB_CREATE_IF_MISSING: flag.optional(),
  MIGRATE_ON_START: flag.default('true'),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(DEFAULT_DATABASE_POOL.max),
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(DEFAULT_DATABASE_POOL.statementTimeoutMs),
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().min(0).default(DEFAULT_DATABASE_POOL.idleInTransactionTimeoutMs),
  DATABASE_PREPARED_STATEMENTS: flag.default('true'),
  GATEWAY_PROCESSES: z.coerce.number().int().min(1).max(256).default(() => availableParallelism()),
  WORKER_NICE: z.coerce.number().int().min(0).max(19).default(10),
  GATEWAY_NODE_ARGS: nodeArgs,
  WORKER_NODE_ARGS: nodeArgs,
  REDIS_URL: urlWithProtocol(['redis:', 'rediss:']).default('redis://127.0.0.1:6379'),
  REDIS_CLUSTER_NODES: clusterNodes.optional(),
  QUEUE_PREFIX: z
    .string()
    .regex(QUEUE_PREFIX_PATTERN, 'must be letters, digits, - or _, with at most one {hash-tag}')
    .max(64)
    .default('booking'),
  SMTP_URL: urlWithProtocol(['smtp:', 'smtps:']).optional(),
  MAIL_DIR: z.string().min(1).default('.mail'),
  MAIL_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  MAIL_FROM: z.string().min(3).default('Booking <no-reply@booking.localhost>'),
  /** Unset: http://localhost:<PORT>, with PORT's default port when PORT is 0 (see loadConfig). */
  PUBLIC_BASE_URL: urlWithProtocol(['http:', 'https:']).optional(),
  LINK_SIGNING_SECRET: z.string().min(16, 'must be at least 16 characters').default('dev-only-link-signing-secret-change-me'),
  CANONICAL_HOST: z.string().min(1).optional(),
  HOLD_MINUTES: z.coerce.number().positive().default(3),
  HOLD_SWEEP_INTERVAL_SECONDS: z.coerce.number().min(0.1).max(86_400).default(30),
  OUTBOX_PRUNE_INTERVAL_SECONDS: z.coerce.number().min(1).max(7 * 86_400).default(3600),
  LIVE_COALESCE_MS: z.coerce.number().int().min(0).max(10_000).default(100),
  WS_MAX_SUBSCRIPTIONS: z.coerce.number().int().min(1).max(10_000).default(20),
  WS_CONNECTIONS_PER_IP: z.coerce.number().int().min(1).default(30),
  WS_CONNECTION_WINDOW_SECONDS: z.coerce.number().positive().default(10),
  WS_MAX_PAYLOAD_BYTES: z.coerce.number().int().min(1024).default(65_536),
  WS_MAX_CONNECTIONS_PER_IP: z.coerce.number().int().min(1).default(50),
  WS_MAX_CONNECTIONS: z.coerce.number().int().min(1).default(10_000),
  TRUST_PROXY: z.coerce.number().int().min(0).max(10).default(0),
  PUBLIC_RATE_LIMIT: z.enum(['on', 'off']).default('on'),
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  RATE_LIMIT_PER_IP: z.coerce.number().int().min(1).default(300),
  RATE_LIMIT_LISTING: z.coerce.number().int().min(1).default(60),
  RATE_LIMIT_RESERVE: z.coerce.number().int().min(1).default(10),
  RATE_LIMIT_BOOKING: z.coerce.number().int().min(1).default(10),
  RATE_LIMIT_BOOKINGS_PER_EMAIL: z.coerce.number().int().min(1).default(5),
  RATE_LIMIT_EMAIL_WINDOW_SECONDS: z.coerce.number().int().min(1).default(3600),
  HOLDS_PER_CLIENT: z.coerce.number().int().min(1).default(3),
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().min(1).default(10),
  GRAPHQL_MAX_COST: z.coerce.number().int().min(1).default(30_000),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(1).default(15),
  GRAPHQL_MAX_DIRECTIVES: z.coerce.number().int().min(1).default(20),
  GRAPHQL_MAX_TOKENS: z.coerce.number().int().min(1).default(3000),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  METRICS_TOKEN: z.string().min(8, 'must be at least 8 characters').optional(),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  WORKER_HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(0),
  NODE_ENV: z.string().default('development'),
});

/** Every environment variable the service reads (manifests and compose files are checked against it). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(schema.shape);

/** The connection pool of one process; the timeouts apply to every pooled connection (0 = off). */
export interface DatabasePool {
  max: number;
  /** PostgreSQL `statement_timeout`: a statement running longer is cancelled. */
  statementTimeoutMs: number;
  /** PostgreSQL `idle_in_transaction_session_timeout`: a session idle inside a transaction this long is ended. */
  idleInTransactionTimeoutMs: number;
  /** Hot statements are prepared once per connection under a name (see kernel/sql.ts); off behind a pooler that cannot keep them (PgBouncer < 1.21 in transaction mode). */
  preparedStatements: boolean;
}

export type Config = {
  port: number;
  /** Gateway processes `npm start` runs, sharing `port` through node:cluster. */
  gatewayProcesses: number;
  /** The niceness `npm start` gives its worker process: on a shared machine, requests go before mail. */
  workerNice: number;
  /** Extra flags for node in the gateway and worker processes `npm start` runs (e.g. `--cpu-prof`, which NODE_OPTIONS refuses). */
  nodeArgs: { gateway: string[]; worker: string[] };
  databaseUrl: string;
  /** A connection straight to PostgreSQL (not through PgBouncer) for the relay's LISTEN, the migration lock and migrations; DATABASE_URL when unset. */
  directDatabaseUrl: string;
  /** Create the database at start when it is missing (default: outside production). */
  createDatabaseIfMissing: boolean;
  /** Apply pending migrations at start (else run `npm run migrate` as a job before). */
  migrateOnStart: boolean;
  databasePool: DatabasePool;
  redisUrl: string;
  /** Redis Cluster seed nodes; when set, BullMQ and pub/sub use the cluster instead of `redisUrl`. */
  redisClusterNodes: { host: string; port: number }[] | undefined;
  /** Prefix of BullMQ keys, Redis keys and pub/sub channels, so several deployments can share one Redis. */
  queuePrefix: string;
  smtpUrl: string | undefined;
  mailDir: string;
  mailFrom: string;
  publicBaseUrl: string;
  linkSigningSecret: string;
  canonicalHost: string | undefined;
  /** How long after the outbox relay queued it a mail is sent at the earliest, so a burst of bookings is answered before its mail is rendered. */
  mailDelayMs: number;
  /** How long a RESERVED participation holds its place, in milliseconds. */
  holdMs: number;
  /** How often (once across all workers) expired holds and mails whose job was lost are looked for. */
  holdSweepIntervalMs: number;
  /** How often (once across all workers) dispatched outbox rows past their retention are deleted. */
  outboxPruneIntervalMs: number;
  /** Window in which live capacity events of one slot are coalesced per subscription (last value wins). */
  liveCoalesceMs: number;
  /** Operations one graphql-ws connection may have open at once (subscriptions, in practice). */
  wsMaxSubscriptions: number;
  /** New WebSocket connections one client IP may open per window, per gateway process. */
  wsConnectionRate: { max: number; windowMs: number };
  /** Largest WebSocket message, the most open WebSocket connections per client IP and per process. */
  wsLimits: { maxPayloadBytes: number; maxConnectionsPerIp: number; maxConnections: number };
  /** Proxies in front of the gateway whose X-Forwarded-For entry is believed (0: the header is ignored). */
  trustProxy: number;
  /** Limits of the public booking flow (see README "Limits"). */
  rateLimits: RateLimits;
  /** Bounds of one GraphQL document. */
  graphqlLimits: { maxDepth: number; maxCost: number; maxAliases: number; maxDirectives: number; maxTokens: number };
  logLevel: LogLevel;
  /** `pretty` for people, `json` for collectors; unset: pretty in development on a terminal, else JSON. */
  logFormat: 'json' | 'pretty' | undefined;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /** When set, the queue dashboard /admin/queues is on, behind this token; off otherwise. */
  adminToken: string | undefined;
  /** Port of the worker's /livez, /readyz and /metrics; unset: none (0: any free port). */
  workerHealthPort: number | undefined;
  /** How long the gateway keeps serving with /readyz at 503 after shutdown began, so load balancers take it out first. */
  shutdownDelayMs: number;
  production: boolean;
};

/** Limits of the public booking flow, counted in Redis across every gateway (holds: in PostgreSQL). */
export interface RateLimits {
  /** PUBLIC_RATE_LIMIT=off switches every one of them off (benchmarks, tests). */
  enabled: boolean;
  windowMs: number;
  /** Public booking-flow requests (REST or GraphQL fields) per client IP and window, all resources together. */
  perIp: number;
  /** Listings (upcoming_bookables, active_products, public_data) per client IP and resource and window. */
  listing: number;
  /** Reservations per client IP and resource and window. */
  reserve: number;
  /** Completed bookings per client IP and resource and window. */
  booking: number;
  /** Bookings per e-mail address per `emailWindowMs`. */
  bookingsPerEmail: number;
  emailWindowMs: number;
  /** Live holds one client IP may have on one resource at once. */
  holdsPerClient: number;
}

export class ConfigError extends Error {}

/**
 * Reads the configuration from environment variables once, validates it and
 * fails with one message that names every bad variable.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`).join('\n');
    throw new ConfigError(`Invalid configuration:\n${problems}`);
  }
  const v = parsed.data;
  const production = v.NODE_ENV === 'production';
  if (v.REDIS_CLUSTER_NODES && !/\{[^}]+\}/.test(v.QUEUE_PREFIX)) {
    throw new ConfigError('Invalid configuration:\n  QUEUE_PREFIX: must contain a {hash-tag} with REDIS_CLUSTER_NODES, e.g. {booking}');
  }
  if (production && v.LINK_SIGNING_SECRET === schema.shape.LINK_SIGNING_SECRET.parse(undefined)) {
    throw new ConfigError('Invalid configuration:\n  LINK_SIGNING_SECRET: must be set in production');
  }
  const config: Config = {
    port: v.PORT,
    gatewayProcesses: v.GATEWAY_PROCESSES,
    workerNice: v.WORKER_NICE,
    nodeArgs: { gateway: v.GATEWAY_NODE_ARGS, worker: v.WORKER_NODE_ARGS },
    databaseUrl: v.DATABASE_URL,
    directDatabaseUrl: v.DIRECT_DATABASE_URL ?? v.DATABASE_URL,
    createDatabaseIfMissing: v.DB_CREATE_IF_MISSING ?? !production,
    migrateOnStart: v.MIGRATE_ON_START,
    databasePool: {
      max: v.DATABASE_POOL_MAX,
      statementTimeoutMs: v.DATABASE_STATEMENT_TIMEOUT_MS,
      idleInTransactionTimeoutMs: v.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      preparedStatements: v.DATABASE_PREPARED_STATEMENTS,
    },
    redisUrl: v.REDIS_URL,
    redisClusterNodes: v.REDIS_CLUSTER_NODES,
    queuePrefix: v.QUEUE_PREFIX,
    smtpUrl: v.SMTP_URL,
    mailDir: v.MAIL_DIR,
    mailFrom: v.MAIL_FROM,
    // Links in mails must reach the gateway a newcomer started on another PORT without further settings.
    publicBaseUrl: (v.PUBLIC_BASE_URL ?? `http://localhost:${v.PORT || schema.shape.PORT.parse(undefined)}`).replace(/\/+$/, ''),
    linkSigningSecret: v.LINK_SIGNING_SECRET,
    canonicalHost: v.CANONICAL_HOST,
    mailDelayMs: v.MAIL_DELAY_MS,
    holdMs: Math.round(v.HOLD_MINUTES * 60_000),
    holdSweepIntervalMs: Math.round(v.HOLD_SWEEP_INTERVAL_SECONDS * 1000),
    outboxPruneIntervalMs: Math.round(v.OUTBOX_PRUNE_INTERVAL_SECONDS * 1000),
    liveCoalesceMs: v.LIVE_COALESCE_MS,
    wsMaxSubscriptions: v.WS_MAX_SUBSCRIPTIONS,
    wsConnectionRate: { max: v.WS_CONNECTIONS_PER_IP, windowMs: Math.round(v.WS_CONNECTION_WINDOW_SECONDS * 1000) },
    wsLimits: { maxPayloadBytes: v.WS_MAX_PAYLOAD_BYTES, maxConnectionsPerIp: v.WS_MAX_CONNECTIONS_PER_IP, maxConnections: v.WS_MAX_CONNECTIONS },
    trustProxy: v.TRUST_PROXY,
    rateLimits: {
      enabled: v.PUBLIC_RATE_LIMIT === 'on',
      windowMs: v.RATE_LIMIT_WINDOW_SECONDS * 1000,
      perIp: v.RATE_LIMIT_PER_IP,
      listing: v.RATE_LIMIT_LISTING,
      reserve: v.RATE_LIMIT_RESERVE,
      booking: v.RATE_LIMIT_BOOKING,
      bookingsPerEmail: v.RATE_LIMIT_BOOKINGS_PER_EMAIL,
      emailWindowMs: v.RATE_LIMIT_EMAIL_WINDOW_SECONDS * 1000,
      holdsPerClient: v.HOLDS_PER_CLIENT,
    },
    graphqlLimits: {
      maxDepth: v.GRAPHQL_MAX_DEPTH,
      maxCost: v.GRAPHQL_MAX_COST,
      maxAliases: v.GRAPHQL_MAX_ALIASES,
      maxDirectives: v.GRAPHQL_MAX_DIRECTIVES,
      maxTokens: v.GRAPHQL_MAX_TOKENS,
    },
    logLevel: v.LOG_LEVEL,
    logFormat: v.LOG_FORMAT,
    metricsToken: v.METRICS_TOKEN,
    adminToken: v.ADMIN_TOKEN,
    workerHealthPort: v.WORKER_HEALTH_PORT,
    shutdownDelayMs: v.SHUTDOWN_DELAY_MS,
    production,
    ...overrides,
  };
  // A test or tool that overrides the database means the direct connection to it too, unless it names one.
  if (!v.DIRECT_DATABASE_URL && !overrides.directDatabaseUrl) config.directDatabaseUrl = config.databaseUrl;
  return config;
}

/** For entry points: the configuration, or exit 2 with the message naming every bad variable. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
}
