import { LOG_LEVELS, type LogLevel } from './config.js';

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** A one-line JSON logger; enough for a container platform to collect. */
export function createLogger(level: LogLevel, base: Record<string, unknown> = {}): Logger {
  const threshold = LOG_LEVELS.indexOf(level);
  const write = (at: LogLevel) => (message: string, fields: Record<string, unknown> = {}) => {
    if (LOG_LEVELS.indexOf(at) < threshold) return;
    const line = JSON.stringify({ time: new Date().toISOString(), level: at, msg: message, ...base, ...fields });
    (at === 'error' || at === 'warn' ? process.stderr : process.stdout).write(line + '\n');
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
