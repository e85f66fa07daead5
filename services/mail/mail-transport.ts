import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
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

export interface MailTransport {
  send(mail: OutgoingMail): Promise<{ messageId: string }>;
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

function smtpTransport(url: string): MailTransport {
  // A pool keeps one connection per sender busy instead of a TCP and SMTP handshake per mail.
  const transporter: Transporter = nodemailer.createTransport({ url, pool: true, maxConnections: 5, ...SMTP_TIMEOUTS });
  return {
    async send(mail) {
      const info = await transporter.sendMail(mail);
      return { messageId: String(info.messageId ?? mail.messageId) };
    },
    close: () => transporter.close(),
  };
}

function fileTransport(dir: string): MailTransport {
  const streamer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  mkdirSync(dir, { recursive: true });
  return {
    async send(mail) {
      const info = await streamer.sendMail(mail);
      const safeId = mail.messageId.replace(/[^A-Za-z0-9._-]/g, '_');
      const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${safeId}.eml`;
      // Written under a temporary name and renamed, so a reader never sees half a mail.
      const partial = join(dir, `.${name}.partial`);
      writeFileSync(partial, info.message as Buffer);
      renameSync(partial, join(dir, name));
      return { messageId: mail.messageId };
    },
    close: () => streamer.close(),
  };
}
