import { createServer, type Server } from 'node:http';
import express from 'express';
import { checkHealth } from '../services/kernel/health.js';
import type { Logger } from '../services/kernel/logger.js';
import type { Orm } from '../services/kernel/orm.js';
import { metricsEndpoint, requestObservability } from '../schema/observability.js';
import { metricsText } from '../services/kernel/metrics.js';
import type { RunningWorker } from './worker.js';

export interface WorkerHealthServer {
  port: number;
  /** /readyz answers 503 from now on (the worker is stopping). */
  draining(): void;
  close(): Promise<void>;
}

/**
 * The worker's small HTTP port (WORKER_HEALTH_PORT): /livez (the process
 * answers), /readyz (the relay and every queue worker run, PostgreSQL and
 * Redis answer; 503 once the worker stops) and /metrics.
 */
export async function startWorkerHealthServer(deps: {
  port: number;
  orm: Orm;
  worker: RunningWorker;
  logger: Logger;
  metricsToken: string | undefined;
}): Promise<WorkerHealthServer> {
  let stopping = false;
  const app = express();
  app.disable('x-powered-by');
  app.use(requestObservability(deps.logger));
  app.get('/livez', (_req, res) => void res.status(200).json({ ok: true, pid: process.pid }));
  app.get('/readyz', async (_req, res) => {
    const running = !stopping && deps.worker.running();
    const report = await checkHealth(deps.orm, deps.worker.redis);
    const ok = report.ok && running && !stopping;
    res.status(ok ? 200 : 503).json({ ok, checks: { ...report.checks, worker: stopping ? 'stopping' : running ? 'ok' : 'not running' }, pid: process.pid });
  });
  app.get('/metrics', metricsEndpoint(deps.metricsToken, metricsText));
  app.use((_req, res) => void res.status(404).json({ error: 'not found: /livez, /readyz and /metrics are served here' }));
  const server: Server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.port, '0.0.0.0', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : deps.port;
  return {
    port,
    draining: () => void (stopping = true),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
