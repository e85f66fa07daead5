import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';

/** One message the sink accepted, parsed. */
export interface SunkMail {
  /** Envelope recipients (RCPT TO). */
  to: string[];
  subject: string;
  text: string;
  html: string;
  messageId: string;
  /** X-Booking-Template header: which template the service used. */
  template: string;
  /** contentType carries the parameters too, e.g. `text/calendar; charset=utf-8; method=REQUEST`. */
  attachments: { filename: string; contentType: string; content: string }[];
  parsed: ParsedMail;
}

export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>` for SMTP_URL / config.smtpUrl. */
  url: string;
  port: number;
  /** Every accepted message, in order of acceptance. */
  messages: SunkMail[];
  /** Messages to one address (case-insensitive). */
  to(address: string): SunkMail[];
  /** Waits until `predicate` holds for the messages, or fails after `timeoutMs`. */
  waitFor(predicate: (messages: SunkMail[]) => boolean, timeoutMs?: number, what?: string): Promise<SunkMail[]>;
  /** Waits until at least `count` messages went to `address`. */
  waitForMail(address: string, count?: number, timeoutMs?: number): Promise<SunkMail[]>;
  /** Makes RCPT TO for matching addresses fail with `code` (e.g. 451 transient, 550 permanent); null stops it. */
  refuse(rule: ((address: string) => { code: number; message: string } | null) | null): void;
  close(): Promise<void>;
}

/**
 * An in-process SMTP server for tests: accepts everything (no TLS, no auth),
 * parses each message with mailparser and keeps it in memory.
 */
export async function startSmtpSink(port = 0): Promise<SmtpSink> {
  const messages: SunkMail[] = [];
  let refusal: ((address: string) => { code: number; message: string } | null) | null = null;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    size: 10 * 1024 * 1024,
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      const refused = refusal?.(address.address);
      if (refused) return callback(Object.assign(new Error(refused.message), { responseCode: refused.code }));
      callback();
    },
    onData(stream, session, callback) {
      // A client that goes away before the final "." leaves an unfinished message: like any MTA, keep nothing.
      let aborted = false;
      stream.once('error', () => (aborted = true));
      simpleParser(stream).then(
        (parsed) => {
          if (aborted) return callback(new Error('message not received in full'));
          const header = parsed.headers.get('x-booking-template');
          messages.push({
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase()),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : '',
            messageId: parsed.messageId ?? '',
            template: typeof header === 'string' ? header : '',
            attachments: parsed.attachments.map((a) => ({ filename: a.filename ?? '', contentType: withParams(a.headers.get('content-type'), a.contentType), content: a.content.toString('utf8') })),
            parsed,
          });
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  const actualPort = (server.server.address() as AddressInfo).port;

  const sink: SmtpSink = {
    url: `smtp://127.0.0.1:${actualPort}`,
    port: actualPort,
    messages,
    to: (address) => messages.filter((m) => m.to.includes(address.toLowerCase())),
    async waitFor(predicate, timeoutMs = 15_000, what = 'mails') {
      const until = Date.now() + timeoutMs;
      while (!predicate(messages)) {
        if (Date.now() > until) {
          throw new Error(`timed out waiting for ${what}; the sink has ${messages.length}: ${messages.map((m) => `${m.template} -> ${m.to.join(',')}`).join('; ')}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return messages;
    },
    async waitForMail(address, count = 1, timeoutMs = 15_000) {
      await sink.waitFor(() => sink.to(address).length >= count, timeoutMs, `${count} mail(s) to ${address}`);
      return sink.to(address);
    },
    refuse(rule) {
      refusal = rule;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return sink;
}

/** `value; key=value; ...` of a parsed Content-Type header (mailparser splits it into value and params). */
function withParams(header: unknown, fallback: string): string {
  if (!header || typeof header !== 'object' || !('value' in header)) return fallback;
  const { value, params } = header as { value: string; params?: Record<string, string> };
  return [value, ...Object.entries(params ?? {}).map(([key, v]) => `${key}=${v}`)].join('; ');
}
