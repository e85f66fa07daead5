/** Entry point of one worker process: outbox relay, mail, hold-expiry and maintenance queues; health and metrics on WORKER_HEALTH_PORT. */
import 'reflect-metadata';
import { systemClock } from '../services/kernel/clock.js';
import { loadConfigOrExit } from '../services/kernel/config.js';
import { createLogger } from '../services/kernel/logger.js';
import { collectProcessMetrics } from '../services/kernel/metrics.js';
import { initOrm, startupOptions } from '../services/kernel/orm.js';
import { onShutdown } from '../services/kernel/shutdown.js';
import { startWorkerHealthServer } from './health-server.js';
import { startWorker } from './worker.js';

const config = loadConfigOrExit();
const logger = createLogger(config.logLevel, { process: 'worker', pid: process.pid }, { format: config.logFormat, production: config.production });
collectProcessMetrics();
const orm = await initOrm(config.databaseUrl, {}, config.databasePool, startupOptions(config));
const worker = await startWorker({ config, orm, clock: systemClock, logger, sweepMs: config.holdSweepIntervalMs, pruneMs: config.outboxPruneIntervalMs });
if (!config.smtpUrl) logger.info('SMTP_URL is not set: e-mails are written as .eml files', { dir: config.mailDir });
const health =
  config.workerHealthPort === undefined
    ? undefined
    : await startWorkerHealthServer({ port: config.workerHealthPort, orm, worker, logger, metricsToken: config.metricsToken });
if (health) logger.info('worker health listening', { port: health.port });

onShutdown(logger, async () => {
  health?.draining();
  await worker.stop();
  await health?.close();
  await orm.close();
});
