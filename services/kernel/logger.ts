import { hostname } from 'node:os';
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import pretty from 'pino-pretty';
import type { LogLevel } from './config.js';

/** The logging interface every part of the service uses: a message, then structured fields. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** A logger whose lines all carry `bindings` (request id, CRM id, job id, ...). */
  child(bindings: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  /** `json` (one object per line) or `pretty`; unset: pretty on a terminal outside production, else JSON. */
  format?: 'json' | 'pretty';
  production?: boolean;
  /** Tests collect the lines; by default info and debug go to stdout, warn and error to stderr. */
  destination?: DestinationStream;
}

/** Field names whose values are personal data: never written, whatever the caller passes. */
const PERSONAL_KEYS = ['email', 'mobile', 'phone', 'recipient', 'password', 'authorization', 'x-service-client-id', 'cookie'];
const REDACT_PATHS = PERSONAL_KEYS.flatMap((key) => [`["${key}"]`, `*["${key}"]`, `*.*["${key}"]`]);

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
/** International numbers (+49 170 1234567) and national ones that start with 0 and have separators or 8+ digits. */
const PHONE = /(?<![\w.:/-])(?:\+|00)\d[\d ()/.-]{6,}\d(?![\w-])|(?<![\w.:/-])0\d{2,5}[ /-]?\d{3,}[\d -]*\d(?![\w-])/g;

/** Replaces e-mail addresses and phone numbers in free text (error messages, SMTP answers) with placeholders. */
export function redactText(text: string): string {
  return text.replace(EMAIL, '[email]').replace(PHONE, '[phone]');
}

/** Walks plain objects and arrays, redacting strings; other values stay as they are. */
function redactValues(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redactValues(item, depth + 1));
  if (value instanceof Error) return redactText(value.stack ?? value.message);
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactValues(item, depth + 1)]));
}

function wrap(instance: PinoLogger): Logger {
  const at = (level: 'debug' | 'info' | 'warn' | 'error') => (message: string, fields?: Record<string, unknown>) => {
    if (!instance.isLevelEnabled(level)) return;
    if (fields) instance[level](fields, redactText(message));
    else instance[level](redactText(message));
  };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (bindings) => wrap(instance.child(bindings)),
  };
}

/**
 * A pino logger behind the small Logger interface: JSON lines with an ISO
 * time, the level as a word and the message as `msg` (pretty-printed for
 * people on a terminal in development). E-mail addresses and phone numbers
 * never reach the log: fields named like personal data are replaced, and
 * addresses and numbers inside any text are masked.
 */
export function createLogger(level: LogLevel, base: Record<string, unknown> = {}, options: LoggerOptions = {}): Logger {
  const format = options.format ?? (!options.production && process.stdout.isTTY ? 'pretty' : 'json');
  const destination =
    options.destination ??
    (format === 'pretty'
      ? pretty({ translateTime: 'SYS:HH:MM:ss.l', ignore: 'hostname', sync: true })
      : pino.multistream(
          [
            { level: 'debug', stream: pino.destination({ dest: 1, sync: true }) },
            { level: 'warn', stream: pino.destination({ dest: 2, sync: true }) },
          ],
          { dedupe: true },
        ));
  const instance = pino(
    {
      level,
      base: { hostname: hostname(), ...base },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => redactValues(object) as Record<string, unknown>,
      },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    destination,
  );
  return wrap(instance);
}
