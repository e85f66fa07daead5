/**
 * What `npm start` runs (compiled, through scripts/start.mjs): the primary of
 * a node:cluster with GATEWAY_PROCESSES gateway processes sharing PORT, plus
 * one worker process. A process that exits while nothing asked it to is
 * started again after a short back-off; one that keeps dying right after its
 * start stops everything. SIGINT/SIGTERM asks every process to stop
 * gracefully and exits once they have; a second signal kills them.
 *
 * The entry points are resolved next to this file: compiled, it runs
 * dist/schema/gateway.js and dist/worker/main.js with plain node; run as
 * TypeScript (`node --import tsx scripts/supervisor.ts`), the .ts entry
 * points through the same loader, which the children inherit (execArgv).
 */
import { type ChildProcess, fork } from 'node:child_process';
import cluster from 'node:cluster';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadConfigOrExit } from '../services/kernel/config.js';
import { createLogger } from '../services/kernel/logger.js';
import { SHUTDOWN_MESSAGE, STOPPABLE_MESSAGE } from '../services/kernel/shutdown.js';
import { Counter, Registry } from 'prom-client';
import { answerMetricsRequests } from '../schema/observability.js';
import { afterUnexpectedExit } from './restart-policy.js';

/** Longer than the children's own grace period (10 s), after which they exit by themselves. */
const STOP_DEADLINE_MS = 15_000;

const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const entry = (path: string) => fileURLToPath(new URL(`../${path}${extension}`, import.meta.url));

const config = loadConfigOrExit();
const logger = createLogger(config.logLevel, { process: 'supervisor', pid: process.pid }, { format: config.logFormat, production: config.production });

// The supervisor's own metric, added to the gateways' sum that GET /metrics on any gateway answers.
const supervisorMetrics = new Registry();
const restarts = new Counter({
  name: 'booking_process_restarts_total',
  help: 'Gateway and worker processes npm start restarted after they exited unexpectedly',
  labelNames: ['process'],
  registers: [supervisorMetrics],
});
for (const name of ['gateway', 'worker']) restarts.inc({ process: name }, 0);
answerMetricsRequests(() => supervisorMetrics.metrics());

interface Slot {
  name: string;
  start(): ChildProcess;
  child?: ChildProcess;
  /** The child listens for SHUTDOWN_MESSAGE (it has set up its graceful shutdown). */
  stoppable?: boolean;
  startedAt: number;
  /** Deaths in a row soon after the start (see restart-policy.ts). */
  quickDeaths: number;
  restartTimer?: NodeJS.Timeout;
}

// The children run with this process's flags (the tsx loader when run as TypeScript) and their own (GATEWAY_NODE_ARGS, WORKER_NODE_ARGS).
cluster.setupPrimary({ exec: entry('schema/gateway'), execArgv: [...process.execArgv, ...config.nodeArgs.gateway] });
const slots: Slot[] = [
  ...Array.from({ length: config.gatewayProcesses }, (_, i) => ({
    name: `gateway ${i + 1}`,
    start: () => cluster.fork().process,
    startedAt: 0,
    quickDeaths: 0,
  })),
  { name: 'worker', start: () => lowerPriority(fork(entry('worker/main'), { stdio: 'inherit', execArgv: [...process.execArgv, ...config.nodeArgs.worker] })), startedAt: 0, quickDeaths: 0 },
];

/**
 * The worker's work (mail, the CRM feed, hold expiry) may wait a moment, a
 * booking's answer may not: where gateways and worker share the CPU, the
 * worker runs at a lower priority (WORKER_NICE), so a burst of bookings is
 * answered first and its mail sent right after.
 */
function lowerPriority(child: ChildProcess): ChildProcess {
  if (config.workerNice > 0 && child.pid !== undefined) {
    try {
      setPriority(child.pid, config.workerNice);
    } catch (error) {
      logger.warn('could not lower the worker priority', { nice: config.workerNice, error: (error as Error).message });
    }
  }
  return child;
}

let stopping = false;
let exitCode = 0;

function launch(slot: Slot): void {
  slot.restartTimer = undefined;
  const child = slot.start();
  slot.child = child;
  slot.stoppable = false;
  slot.startedAt = Date.now();
  child.on('message', (message) => {
    if (message === STOPPABLE_MESSAGE) slot.stoppable = true;
  });
  child.on('error', (error) => logger.error('process error', { name: slot.name, childPid: child.pid, error: error.message }));
  child.once('exit', (code, signal) => {
    slot.child = undefined;
    if (stopping) {
      logger.info('process stopped', { name: slot.name, childPid: child.pid, exit: signal ?? code });
      // A child still starting has no handler yet, so SIGTERM ends it; that is a clean stop too.
      if (code !== 0 && signal !== 'SIGTERM') exitCode = 1;
      exitWhenAllStopped();
      return;
    }
    const lived = Date.now() - slot.startedAt;
    const decision = afterUnexpectedExit(slot.quickDeaths, lived);
    slot.quickDeaths = decision.quickDeaths;
    if (decision.action === 'give-up') {
      logger.error('process keeps exiting right after its start; stopping everything', { name: slot.name, exit: signal ?? code, deaths: slot.quickDeaths });
      exitCode = 1;
      stopAll();
      return;
    }
    restarts.inc({ process: slot.name.startsWith('gateway') ? 'gateway' : 'worker' });
    logger.error('process exited unexpectedly; restarting it', { name: slot.name, childPid: child.pid, exit: signal ?? code, livedMs: lived, delayMs: decision.delayMs });
    slot.restartTimer = setTimeout(() => launch(slot), decision.delayMs);
  });
}

/** Asks every process to stop (once); SIGKILL for any still alive after STOP_DEADLINE_MS. */
function stopAll(): void {
  if (stopping) return;
  stopping = true;
  for (const slot of slots) clearTimeout(slot.restartTimer);
  for (const slot of slots) {
    if (!slot.child) continue;
    // After Ctrl-C (or a signal to the process group) every child has its signal already; a message is no second one.
    if (slot.stoppable && slot.child.connected) slot.child.send(SHUTDOWN_MESSAGE, () => undefined);
    else slot.child.kill('SIGTERM');
  }
  setTimeout(() => {
    for (const child of running()) {
      logger.error('process did not stop in time; killing it', { childPid: child.pid });
      child.kill('SIGKILL');
    }
  }, STOP_DEADLINE_MS + config.shutdownDelayMs).unref();
  exitWhenAllStopped();
}

function running(): ChildProcess[] {
  return slots.flatMap((slot) => (slot.child ? [slot.child] : []));
}

function exitWhenAllStopped(): void {
  if (running().length > 0) return;
  logger.info('stopped', { exitCode });
  process.exit(exitCode);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (!stopping) {
      logger.info('shutting down', { signal });
      stopAll();
      return;
    }
    // A second signal: stop at once (after a second Ctrl-C the children have exited by themselves already).
    logger.error('second signal: killing every process', { signal });
    for (const child of running()) child.kill('SIGKILL');
  });
}

// `npm start` runs this under npm and sh; a SIGTERM to npm ends sh without passing the signal on. Under npm, stop when
// the parent is gone. Started any other way (`nohup node scripts/start.mjs &`, a service manager), the end of the
// shell that started it is no reason to stop.
const parentPid = process.ppid;
if (process.env.npm_lifecycle_event && parentPid > 1) {
  const watch = setInterval(() => {
    try {
      process.kill(parentPid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH' || stopping) return;
      clearInterval(watch);
      logger.info('shutting down', { signal: 'parent gone', parentPid });
      stopAll();
    }
  }, 1000);
  watch.unref();
}

logger.info('starting', { gateways: config.gatewayProcesses, workers: 1, port: config.port });
for (const slot of slots) launch(slot);
