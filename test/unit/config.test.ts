import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../services/kernel/config.js';

/** The message loadConfig throws for an environment, or undefined when it is valid. */
function problem(env: Record<string, string | undefined>): string | undefined {
  try {
    loadConfig(env);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
}

describe('loadConfig', () => {
  // toMatchObject, so a variable added later does not break these tests; each one listed is checked.
  it('has the documented defaults for an empty environment', () => {
    expect(loadConfig({})).toMatchObject({
      port: 4000,
      gatewayProcesses: availableParallelism(),
      databaseUrl: 'postgresql://postgres@127.0.0.1:5432/booking',
      databasePool: { max: 4, statementTimeoutMs: 30_000, idleInTransactionTimeoutMs: 60_000, preparedStatements: true },
      redisUrl: 'redis://127.0.0.1:6379',
      queuePrefix: 'booking',
      smtpUrl: undefined,
      mailDir: '.mail',
      mailFrom: 'Booking <no-reply@booking.localhost>',
      mailDelayMs: 1000,
      publicBaseUrl: 'http://localhost:4000',
      linkSigningSecret: 'dev-only-link-signing-secret-change-me',
      canonicalHost: undefined,
      holdMs: 180_000,
      logLevel: 'info',
      production: false,
    });
  });

  it('links mails to the gateway on its PORT unless PUBLIC_BASE_URL says where', () => {
    expect(loadConfig({ PORT: '4100' }).publicBaseUrl).toBe('http://localhost:4100');
    // PORT 0 (any free port) names no port a link could reach: the documented port stands in.
    expect(loadConfig({ PORT: '0' }).publicBaseUrl).toBe('http://localhost:4000');
    expect(loadConfig({ PORT: '4100', PUBLIC_BASE_URL: 'https://book.example.com/' }).publicBaseUrl).toBe('https://book.example.com');
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      GATEWAY_PROCESSES: '3',
      DATABASE_URL: 'postgres://u:p@db:5432/other',
      DATABASE_POOL_MAX: '25',
      DATABASE_STATEMENT_TIMEOUT_MS: '5000',
      DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '0',
      DATABASE_PREPARED_STATEMENTS: 'false',
      REDIS_URL: 'rediss://cache:6380/2',
      QUEUE_PREFIX: 'staging_1',
      SMTP_URL: 'smtp://mailpit:1025',
      MAIL_DIR: '/tmp/mail',
      MAIL_FROM: 'Bookings <b@example.com>',
      MAIL_DELAY_MS: '0',
      PUBLIC_BASE_URL: 'https://www.example.com///',
      LINK_SIGNING_SECRET: 'a-long-enough-secret-value',
      CANONICAL_HOST: 'www.example.com',
      HOLD_MINUTES: '0.5',
      LOG_LEVEL: 'debug',
      NODE_ENV: 'production',
    });
    expect(config).toMatchObject({
      port: 8080,
      gatewayProcesses: 3,
      databaseUrl: 'postgres://u:p@db:5432/other',
      databasePool: { max: 25, statementTimeoutMs: 5000, idleInTransactionTimeoutMs: 0, preparedStatements: false },
      redisUrl: 'rediss://cache:6380/2',
      queuePrefix: 'staging_1',
      smtpUrl: 'smtp://mailpit:1025',
      mailDir: '/tmp/mail',
      mailFrom: 'Bookings <b@example.com>',
      mailDelayMs: 0,
      publicBaseUrl: 'https://www.example.com',
      linkSigningSecret: 'a-long-enough-secret-value',
      canonicalHost: 'www.example.com',
      holdMs: 30_000,
      logLevel: 'debug',
      production: true,
    });
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '', SMTP_URL: '' })).toMatchObject({ port: 4000, smtpUrl: undefined });
  });

  it('lets tests override values after validation', () => {
    expect(loadConfig({}, { port: 0, holdMs: 10 })).toMatchObject({ port: 0, holdMs: 10 });
  });

  it.each(['abc', '70000', '-1', '3.5'])('a bad PORT (%s) gives one message naming PORT', (port) => {
    const message = problem({ PORT: port });
    expect(message).toMatch(/^Invalid configuration:\n  PORT: /);
    expect(message!.split('\n')).toHaveLength(2);
  });

  it.each(['not a url', 'mysql://root@127.0.0.1/booking', 'http://127.0.0.1:5432/booking'])(
    'a bad DATABASE_URL (%s) gives one message naming DATABASE_URL',
    (url) => {
      expect(problem({ DATABASE_URL: url })).toBe('Invalid configuration:\n  DATABASE_URL: must be a URL starting with postgres:// or postgresql://');
    },
  );

  it('takes 0 as "off" for both database timeouts', () => {
    expect(loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '0', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '0' }).databasePool).toEqual({
      max: 4,
      statementTimeoutMs: 0,
      idleInTransactionTimeoutMs: 0,
      preparedStatements: true,
    });
  });

  it.each([
    ['GATEWAY_PROCESSES', '0'],
    ['GATEWAY_PROCESSES', '-2'],
    ['GATEWAY_PROCESSES', '1.5'],
    ['GATEWAY_PROCESSES', 'many'],
    ['DATABASE_POOL_MAX', '0'],
    ['DATABASE_POOL_MAX', '2.5'],
    ['DATABASE_POOL_MAX', 'ten'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '-1'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '30s'],
    ['DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', '-5'],
    ['DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', '0.5'],
    ['DATABASE_PREPARED_STATEMENTS', 'sometimes'],
  ])('a bad %s (%s) gives one message naming it', (name, value) => {
    const message = problem({ [name]: value });
    expect(message).toMatch(new RegExp(`^Invalid configuration:\\n  ${name}: `));
    expect(message!.split('\n')).toHaveLength(2);
  });

  it('names every bad variable in one message', () => {
    const message = problem({ PORT: 'x', REDIS_URL: 'http://cache', LOG_LEVEL: 'loud', SMTP_URL: 'mailpit:1025', LINK_SIGNING_SECRET: 'short' })!;
    for (const name of ['PORT', 'REDIS_URL', 'LOG_LEVEL', 'SMTP_URL', 'LINK_SIGNING_SECRET']) expect(message).toContain(`  ${name}: `);
    expect(message).not.toContain('DATABASE_URL');
  });

  it('refuses the development link secret in production', () => {
    expect(problem({ NODE_ENV: 'production' })).toBe('Invalid configuration:\n  LINK_SIGNING_SECRET: must be set in production');
  });

  describe('operations settings (issue 13)', () => {
    it('has the documented defaults', () => {
      expect(loadConfig({})).toMatchObject({
        directDatabaseUrl: 'postgresql://postgres@127.0.0.1:5432/booking',
        createDatabaseIfMissing: true,
        migrateOnStart: true,
        redisClusterNodes: undefined,
        logFormat: undefined,
        metricsToken: undefined,
        adminToken: undefined,
        workerHealthPort: undefined,
        shutdownDelayMs: 0,
        holdSweepIntervalMs: 30_000,
        outboxPruneIntervalMs: 3_600_000,
      });
    });

    it('reads GATEWAY_NODE_ARGS and WORKER_NODE_ARGS as node flags (none by default) and refuses anything else', () => {
      expect(loadConfig({}).nodeArgs).toEqual({ gateway: [], worker: [] });
      expect(loadConfig({ GATEWAY_NODE_ARGS: ' --cpu-prof  --cpu-prof-dir=/tmp/p ', WORKER_NODE_ARGS: '--max-old-space-size=512' }).nodeArgs).toEqual({
        gateway: ['--cpu-prof', '--cpu-prof-dir=/tmp/p'],
        worker: ['--max-old-space-size=512'],
      });
      expect(problem({ WORKER_NODE_ARGS: '--inspect; rm -rf /' })).toMatch(/WORKER_NODE_ARGS: must be node flags separated by spaces/);
    });

    it('creates a missing database only outside production unless told', () => {
      const production = { NODE_ENV: 'production', LINK_SIGNING_SECRET: 'a-long-enough-secret-value' };
      expect(loadConfig(production).createDatabaseIfMissing).toBe(false);
      expect(loadConfig({ ...production, DB_CREATE_IF_MISSING: 'true' }).createDatabaseIfMissing).toBe(true);
      expect(loadConfig({ DB_CREATE_IF_MISSING: 'FALSE' }).createDatabaseIfMissing).toBe(false);
      expect(loadConfig({ MIGRATE_ON_START: '0' }).migrateOnStart).toBe(false);
      expect(problem({ MIGRATE_ON_START: 'yes please' })).toBe('Invalid configuration:\n  MIGRATE_ON_START: must be true or false');
    });

    it('reads DIRECT_DATABASE_URL, which follows a database override when unset', () => {
      const env = { DATABASE_URL: 'postgresql://u@pgbouncer:6432/booking', DIRECT_DATABASE_URL: 'postgresql://u@db:5432/booking' };
      expect(loadConfig(env)).toMatchObject({ databaseUrl: 'postgresql://u@pgbouncer:6432/booking', directDatabaseUrl: 'postgresql://u@db:5432/booking' });
      expect(loadConfig({}, { databaseUrl: 'postgresql://u@db:5432/other' }).directDatabaseUrl).toBe('postgresql://u@db:5432/other');
      expect(problem({ DIRECT_DATABASE_URL: 'redis://x' })).toMatch(/DIRECT_DATABASE_URL: must be a URL/);
    });

    it.each(['{booking}', 'staging{booking}', 'a-b_c', '{b}-x'])('accepts QUEUE_PREFIX %s', (prefix) => {
      expect(loadConfig({ QUEUE_PREFIX: prefix }).queuePrefix).toBe(prefix);
    });

    it.each(['{}', '{a}{b}', 'a:b', '{a', 'a}', 'with space'])('refuses QUEUE_PREFIX %s', (prefix) => {
      expect(problem({ QUEUE_PREFIX: prefix })).toMatch(/^Invalid configuration:\n  QUEUE_PREFIX: /);
    });

    it('reads REDIS_CLUSTER_NODES and then wants a {hash-tag} prefix', () => {
      const nodes = 'redis-0:6379, redis-1:6380,10.0.0.3:7000';
      expect(loadConfig({ REDIS_CLUSTER_NODES: nodes, QUEUE_PREFIX: '{booking}' }).redisClusterNodes).toEqual([
        { host: 'redis-0', port: 6379 },
        { host: 'redis-1', port: 6380 },
        { host: '10.0.0.3', port: 7000 },
      ]);
      expect(problem({ REDIS_CLUSTER_NODES: nodes })).toMatch(/QUEUE_PREFIX: must contain a \{hash-tag\} with REDIS_CLUSTER_NODES/);
      expect(problem({ REDIS_CLUSTER_NODES: 'redis-0', QUEUE_PREFIX: '{b}' })).toMatch(/REDIS_CLUSTER_NODES: must be host:port pairs/);
      expect(problem({ REDIS_CLUSTER_NODES: 'redis-0:99999', QUEUE_PREFIX: '{b}' })).toMatch(/REDIS_CLUSTER_NODES: /);
    });

    it('reads tokens, ports, the shutdown delay, log format and maintenance intervals', () => {
      expect(
        loadConfig({
          METRICS_TOKEN: 'metrics-token',
          ADMIN_TOKEN: 'admin-token-0123456789',
          WORKER_HEALTH_PORT: '4001',
          SHUTDOWN_DELAY_MS: '5000',
          LOG_FORMAT: 'pretty',
          HOLD_SWEEP_INTERVAL_SECONDS: '0.5',
          OUTBOX_PRUNE_INTERVAL_SECONDS: '60',
        }),
      ).toMatchObject({
        metricsToken: 'metrics-token',
        adminToken: 'admin-token-0123456789',
        workerHealthPort: 4001,
        shutdownDelayMs: 5000,
        logFormat: 'pretty',
        holdSweepIntervalMs: 500,
        outboxPruneIntervalMs: 60_000,
      });
      const message = problem({ METRICS_TOKEN: 'short', ADMIN_TOKEN: 'short', WORKER_HEALTH_PORT: '70000', LOG_FORMAT: 'xml', SHUTDOWN_DELAY_MS: '-1' })!;
      for (const name of ['METRICS_TOKEN', 'ADMIN_TOKEN', 'WORKER_HEALTH_PORT', 'LOG_FORMAT', 'SHUTDOWN_DELAY_MS']) expect(message).toContain(`  ${name}: `);
    });
  });
});
