/** Entry point of one gateway process: REST facade and GraphQL (HTTP and WebSocket) on one port. */
import 'reflect-metadata';
import { systemClock } from '../services/kernel/clock.js';
import { loadConfigOrExit } from '../services/kernel/config.js';
import { createLogger } from '../services/kernel/logger.js';
import { collectProcessMetrics } from '../services/kernel/metrics.js';
import { initOrm, startupOptions } from '../services/kernel/orm.js';
import { createRedisClient } from '../services/kernel/redis.js';
import { onShutdown } from '../services/kernel/shutdown.js';
import { createGateway } from './app.js';

const config = loadConfigOrExit();
const logger = createLogger(config.logLevel, { process: 'gateway', pid: process.pid }, { format: config.logFormat, production: config.production });
collectProcessMetrics();
const orm = await initOrm(config.databaseUrl, {}, config.databasePool, startupOptions(config));
const redis = createRedisClient(config, { name: 'gateway' });
const gateway = await createGateway({ config, orm, redis, clock: systemClock, logger });
const port = await gateway.listen(config.port);
logger.info('gateway listening', { port, graphql: `http://localhost:${port}/graphql` });

onShutdown(logger, async () => {
  await gateway.close();
  redis.disconnect();
  await orm.close();
}, 10_000 + config.shutdownDelayMs);
