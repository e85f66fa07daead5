/** Entry point of one worker process: outbox relay, mail and hold-expiry queues. */
import 'reflect-metadata';
import { systemClock } from '../services/kernel/clock.js';
import { loadConfigOrExit } from '../services/kernel/config.js';
import { createLogger } from '../services/kernel/logger.js';
import { initOrm } from '../services/kernel/orm.js';
import { onShutdown } from '../services/kernel/shutdown.js';
import { startWorker } from './worker.js';

const config = loadConfigOrExit();
const logger = createLogger(config.logLevel, { process: 'worker', pid: process.pid });
const orm = await initOrm(config.databaseUrl, {}, config.databasePool);
const worker = await startWorker({ config, orm, clock: systemClock, logger });
if (!config.smtpUrl) logger.info('SMTP_URL is not set: e-mails are written as .eml files', { dir: config.mailDir });

onShutdown(logger, async () => {
  await worker.stop();
  await orm.close();
});
