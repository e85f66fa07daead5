import { describe, expect, it } from 'vitest';
import { createLogger, redactText } from '../../services/kernel/logger.js';

/** A logger at `level` whose JSON lines the test reads. */
function captured(level: Parameters<typeof createLogger>[0] = 'debug') {
  const raw: string[] = [];
  const logger = createLogger(level, { process: 'test' }, { destination: { write: (line: string) => void raw.push(line) } });
  return { logger, raw, lines: () => raw.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('logger (pino behind the Logger interface)', () => {
  it('writes one JSON line per call: ISO time, level as a word, msg, base and fields', () => {
    const { logger, lines } = captured();
    logger.info('gateway listening', { port: 4000 });
    const [line] = lines();
    expect(line).toMatchObject({ level: 'info', msg: 'gateway listening', process: 'test', port: 4000 });
    expect(new Date(line!.time as string).toISOString()).toBe(line!.time);
  });

  it('respects the level', () => {
    const { logger, lines } = captured('warn');
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');
    expect(lines().map((line) => line.level)).toEqual(['warn', 'error']);
    const silent = captured('silent');
    silent.logger.error('nothing');
    expect(silent.raw).toEqual([]);
  });

  it('child loggers carry their bindings (request id, CRM id, job id) on every line', () => {
    const { logger, lines } = captured();
    const request = logger.child({ requestId: 'r-1', crmId: 'acme' });
    request.child({ jobId: 'mail-7' }).warn('retrying');
    expect(lines()[0]).toMatchObject({ requestId: 'r-1', crmId: 'acme', jobId: 'mail-7', msg: 'retrying', process: 'test' });
  });

  it('never writes e-mail addresses or phone numbers: fields named like them, and inside any text', () => {
    const { logger, raw } = captured();
    logger.warn('mail to max.muster@example.com failed', {
      email: 'anna@example.com',
      mobile: '+491701234567',
      recipient: { email: 'eve@example.org', name: 'Eve' },
      nested: { to: { phone: '0170 1234567' } },
      error: 'SMTP 550 <bob@mail.example.de>: mailbox full; call +49 (170) 765-4321 or 030 1234567',
      list: ['carl@example.com'],
    });
    const text = raw.join('');
    for (const secret of ['max.muster@example.com', 'anna@example.com', '+491701234567', 'eve@example.org', '0170 1234567', 'bob@mail.example.de', '765-4321', '030 1234567', 'carl@example.com']) {
      expect(text).not.toContain(secret);
    }
    const [line] = raw.map((l) => JSON.parse(l));
    expect(line).toMatchObject({ email: '[redacted]', mobile: '[redacted]', recipient: '[redacted]', msg: 'mail to [email] failed' });
    expect(line.error).toContain('mailbox full');
  });

  it('leaves ids, times and numbers that are not phone numbers alone', () => {
    for (const text of ['2027-05-04T07:00:00.000Z', '0b5e6f2a-0123-4567-89ab-0123456789ab', 'port 4000', 'hold-3a1f', 'took 1234567 ms', 'v1.2.3']) {
      expect(redactText(text)).toBe(text);
    }
  });
});
