import type { Logger } from './logger.js';

/** The IPC message by which a supervisor (`npm start`) asks a process it started to stop gracefully. */
export const SHUTDOWN_MESSAGE = 'booking:shutdown';
/** What a supervised process tells its supervisor once it listens for SHUTDOWN_MESSAGE; before that, SIGTERM it. */
export const STOPPABLE_MESSAGE = 'booking:stoppable';

/**
 * Runs `stop` once on SIGINT or SIGTERM; a second signal, or a stop that
 * hangs past the grace period, exits at once. A process started by a
 * supervisor (with an IPC channel) also stops on its SHUTDOWN_MESSAGE, which
 * is no second signal: after Ctrl-C the terminal has signalled every process
 * already, and the supervisor's request must not turn a graceful stop into an
 * abrupt one. Losing the supervisor stops the process too.
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>, graceMs = 10_000): void {
  let stopping = false;
  const begin = (reason: string) => {
    stopping = true;
    logger.info('shutting down', { signal: reason });
    setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, graceMs).unref();
    stop().then(
      () => process.exit(0),
      (error) => {
        logger.error('shutdown failed', { error: String(error) });
        process.exit(1);
      },
    );
  };
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    begin(signal);
  };
  process.on('SIGINT', handle);
  process.on('SIGTERM', handle);
  if (process.send) {
    process.on('message', (message) => {
      if (message === SHUTDOWN_MESSAGE && !stopping) begin('supervisor');
    });
    process.once('disconnect', () => {
      if (!stopping) begin('supervisor gone');
    });
    process.send(STOPPABLE_MESSAGE, undefined, {}, () => undefined);
  }
}
