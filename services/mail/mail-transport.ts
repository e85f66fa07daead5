import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer';
import { parseConnectionUrl } from 'nodemailer/lib/shared';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { Config } from '../kernel/config.js';

export interface MailAttachment {
  filename: string;
  content: string;
  contentType: string;
}

export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  attachments?: MailAttachment[];
  /** Stable id so a receiving server can spot a resent duplicate. */
  messageId: string;
  headers?: Record<string, string>;
}

/**
 * Called by a transport right before the step that completes the delivery
 * (SMTP: the final "." of DATA; files: the rename). It records the mail as
 * sent; if it throws, the transport aborts and nothing is delivered.
 */
export type HandOver = () => Promise<void>;

export interface MailTransport {
  /** Sends one mail; a transport that knows no completing step may ignore `handOver` (the caller records afterwards). */
  send(mail: OutgoingMail, handOver?: HandOver): Promise<{ messageId: string }>;
  close(): void;
}

/**
 * A refusal that another attempt cannot change: an SMTP 5xx answer
 * (unknown mailbox, message rejected) or an address nodemailer cannot use.
 */
export function isPermanentMailError(error: unknown): boolean {
  const { responseCode, code } = (error ?? {}) as { responseCode?: number; code?: string };
  if (typeof responseCode === 'number') return responseCode >= 500 && responseCode < 600;
  return code === 'EENVELOPE';
}

/**
 * Timeouts well below the worker's job lock, so a hanging SMTP server fails
 * an attempt (and it is retried) instead of holding a job for minutes.
 */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

/**
 * SMTP when SMTP_URL is set; otherwise every mail is written as an .eml file
 * to MAIL_DIR (open it with any mail program, or read it as text).
 */
export function createMailTransport(config: Config): MailTransport {
  if (config.smtpUrl) return smtpTransport(config.smtpUrl);
  return fileTransport(config.mailDir);
}

/** The MIME message as nodemailer composes it for sendMail, with its envelope. */
async function compose(mail: OutgoingMail): Promise<{ raw: Buffer; envelope: { from: string | false; to: string[] } }> {
  const node = new MailComposer(mail).compile();
  const raw = await node.build();
  const envelope = node.getEnvelope();
  return { raw, envelope: { from: envelope.from, to: envelope.to } };
}

/**
 * The message for the DATA phase: its bytes first, then — once they are
 * taken — the hand-over, and only after it the end (which makes nodemailer
 * write the final "."). A crash before the hand-over leaves the server with
 * an unfinished message it discards, so a retry cannot double the mail.
 */
function dataStream(raw: Buffer, handOver: HandOver | undefined): Readable {
  let step = 0;
  return new Readable({
    read() {
      if (step === 0) {
        step = 1;
        this.push(raw);
      } else if (step === 1) {
        step = 2;
        (handOver ?? (async () => undefined))().then(
          () => this.push(null),
          (error: Error) => this.destroy(error),
        );
      }
    },
  });
}

/** Mails one SMTP session sends before it is closed (a fresh one follows), as nodemailer's pool does by default. */
export const SMTP_SESSION_MESSAGES = 100;
/** How long a session waits open for the next mail before it says QUIT. */
export const SMTP_SESSION_IDLE_MS = 5_000;

interface SmtpSession {
  connection: SMTPConnection;
  messages: number;
  /** Closed by either side, or failed: never handed a mail again. */
  done: boolean;
  idleTimer?: NodeJS.Timeout;
  /** Fails the step in progress (socket errors arrive as events). */
  fail?: (error: Error) => void;
}

/**
 * SMTP with nodemailer's SMTPConnection (STARTTLS when offered, AUTH from
 * the URL). Not sendMail: it reads the message before the server accepted
 * DATA, so the hand-over could not sit right before the ".".
 *
 * Sessions are kept open between mails: a booking sends two at once and a
 * burst of bookings hundreds, and a session of its own per mail cost a
 * connection, the greeting, EHLO (with a relay, STARTTLS and AUTH too) and
 * QUIT each. A mail takes an idle session or opens one; a session that
 * sent SMTP_SESSION_MESSAGES mails, or waited SMTP_SESSION_IDLE_MS for the
 * next, is closed. A kept session the server closed meanwhile fails
 * before anything was handed over: the mail then goes over a new session.
 */
export function smtpTransport(url: string, limits = { messages: SMTP_SESSION_MESSAGES, idleMs: SMTP_SESSION_IDLE_MS }): MailTransport {
  const options = { ...parseConnectionUrl(url), ...SMTP_TIMEOUTS };
  const idle: SmtpSession[] = [];
  let closed = false;

  const step = <T>(session: SmtpSession, run: (resolve: (value: T) => void, reject: (error: Error) => void) => void) =>
    new Promise<T>((resolve, reject) => {
      session.fail = reject;
      run(resolve, reject);
    }).finally(() => (session.fail = undefined));

  const open = async (): Promise<SmtpSession> => {
    const session: SmtpSession = { connection: new SMTPConnection(options), messages: 0, done: false };
    session.connection.on('error', (error: Error) => {
      session.done = true;
      session.fail?.(error);
    });
    session.connection.once('end', () => {
      session.done = true;
      forget(session);
      session.fail?.(Object.assign(new Error('the SMTP server closed the connection'), { code: 'ECONNECTION' }));
    });
    try {
      await step<void>(session, (resolve) => session.connection.connect(() => resolve()));
      if (options.auth) await step<void>(session, (resolve, reject) => session.connection.login(options.auth, (error) => (error ? reject(error) : resolve())));
    } catch (error) {
      // Refused login or greeting: nothing to keep.
      session.done = true;
      session.connection.close();
      throw error;
    }
    return session;
  };

  const takeIdle = (): SmtpSession | null => {
    for (let session = idle.pop(); session; session = idle.pop()) {
      clearTimeout(session.idleTimer);
      if (!session.done) return session;
    }
    return null;
  };

  const keep = (session: SmtpSession) => {
    if (closed || session.messages >= limits.messages) return quit(session);
    if (session.done) return;
    session.idleTimer = setTimeout(() => quit(session), limits.idleMs).unref();
    idle.push(session);
  };

  const forget = (session: SmtpSession) => {
    clearTimeout(session.idleTimer);
    const index = idle.indexOf(session);
    if (index >= 0) idle.splice(index, 1);
  };

  const quit = (session: SmtpSession) => {
    forget(session);
    if (session.done) return;
    session.done = true;
    session.connection.quit();
  };

  return {
    async send(mail, handOver) {
      const { raw, envelope } = await compose(mail);
      for (;;) {
        const kept = takeIdle();
        const session = kept ?? (await open());
        let handedOver = false;
        const handingOver = async () => {
          handedOver = true;
          await handOver?.();
        };
        try {
          // A copy per attempt: SMTPConnection keeps the state of the transaction (errors included) on the envelope it is given.
          const attempt = { from: envelope.from, to: [...envelope.to] };
          await step<void>(session, (resolve, reject) =>
            session.connection.send(attempt, dataStream(raw, handingOver), (error) => (error ? reject(error) : resolve())),
          );
          session.messages += 1;
          keep(session);
          return { messageId: mail.messageId };
        } catch (error) {
          // The session may be mid-DATA: drop it, so the server discards the message.
          session.done = true;
          session.connection.close();
          // A kept session that had gone stale (closed, or 421 "closing"): nothing of this mail was handed over, a new
          // session sends it. Any refusal of the mail itself (451 greylisting too) fails this attempt, as nodemailer's pool does.
          if (kept && !handedOver && sessionGone(error)) continue;
          throw error;
        }
      }
    },
    close() {
      closed = true;
      for (const session of [...idle]) quit(session);
    },
  };
}

/** The session, not the mail, failed: the server ended it (421) or the connection broke. */
const sessionGone = (error: unknown): boolean => {
  const { responseCode, code } = (error ?? {}) as { responseCode?: number; code?: string };
  return responseCode === 421 || code === 'ECONNECTION' || code === 'ESOCKET' || code === 'ETIMEDOUT';
};

function fileTransport(dir: string): MailTransport {
  mkdirSync(dir, { recursive: true });
  return {
    async send(mail, handOver) {
      const { raw } = await compose(mail);
      const safeId = mail.messageId.replace(/[^A-Za-z0-9._-]/g, '_');
      const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${safeId}.eml`;
      // Written under a temporary name and renamed, so a reader never sees half a mail.
      const partial = join(dir, `.${name}.partial`);
      writeFileSync(partial, raw);
      try {
        await handOver?.();
      } catch (error) {
        rmSync(partial, { force: true });
        throw error;
      }
      renameSync(partial, join(dir, name));
      return { messageId: mail.messageId };
    },
    close: () => undefined,
  };
}
