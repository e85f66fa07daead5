import type { Logger } from './logger.js';

/** The IPC message by which a supervisor (`npm start`) asks a process it started to stop gracefully. */
export const SHUTDOWN_MESSAGE = 'booking:shutdown';
/** What a supervised process tells its supervisor once it listens for SHUTDOWN_MESSAGE; before that, SIGTERM it. */
export const STOPPABLE_MESSAGE = 'booking:stoppable';

/**
 * Runs `stop` once on SIGINT or SIGTERM; a second signal, or a stop that
 * hangs past the grace period, exits at once. A process started by a
 * supervisor (with an IPC channel) also stops on its SHUTDOWN_MESSAGE, which
 * does not count as a signal: after Ctrl-C the terminal signals every process
 * of the group as well, in either order, and that must stay a graceful stop.
 * Losing the supervisor stops the process too.
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>, graceMs = 10_000): void {
  let stopping = false;
  let signalled = false;
  const begin = (reason: string) => {
    if (stopping) return;
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
    if (signalled) process.exit(1);
    signalled = true;
    begin(signal);
  };
  process.on('SIGINT', handle);
  process.on('SIGTERM', handle);
  if (process.send) {
    process.on('message', (message) => {
      if (message === SHUTDOWN_MESSAGE) begin('supervisor');
    });
    process.once('disconnect', () => begin('supervisor gone'));
    process.send(STOPPABLE_MESSAGE, undefined, {}, () => undefined);
  }
}
