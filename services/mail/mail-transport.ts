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

/**
 * One SMTP session per mail with nodemailer's SMTPConnection (STARTTLS when
 * offered, AUTH from the URL). Not sendMail: it reads the message before the
 * server accepted DATA, so the hand-over could not sit right before the ".".
 */
function smtpTransport(url: string): MailTransport {
  const options = { ...parseConnectionUrl(url), ...SMTP_TIMEOUTS };
  return {
    async send(mail, handOver) {
      const { raw, envelope } = await compose(mail);
      const connection = new SMTPConnection(options);
      // Socket errors arrive as events (also after a step completed); the step in progress fails with them.
      let fail: ((error: Error) => void) | undefined;
      connection.on('error', (error: Error) => fail?.(error));
      const step = <T>(run: (resolve: (value: T) => void, reject: (error: Error) => void) => void) =>
        new Promise<T>((resolve, reject) => {
          fail = reject;
          run(resolve, reject);
        });
      let completed = false;
      try {
        await step<void>((resolve) => connection.connect(() => resolve()));
        if (options.auth) await step<void>((resolve, reject) => connection.login(options.auth, (error) => (error ? reject(error) : resolve())));
        await step<void>((resolve, reject) => connection.send(envelope, dataStream(raw, handOver), (error) => (error ? reject(error) : resolve())));
        completed = true;
        return { messageId: mail.messageId };
      } finally {
        fail = undefined;
        // After a failure the session may be mid-DATA: drop it, so the server discards the message.
        if (completed) connection.quit();
        else connection.close();
      }
    },
    close: () => undefined,
  };
}

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
