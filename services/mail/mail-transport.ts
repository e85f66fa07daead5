import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../kernel/config.js';

export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  attachments?: { filename: string; content: string; contentType: string }[];
  /** Stable id so a receiving server can spot a resent duplicate. */
  messageId: string;
}

export interface MailTransport {
  send(mail: OutgoingMail): Promise<{ messageId: string }>;
  close(): void;
}

/**
 * SMTP when SMTP_URL is set; otherwise every mail is written as an .eml file
 * to MAIL_DIR (open it with any mail program, or read it as text).
 */
export function createMailTransport(config: Config): MailTransport {
  if (config.smtpUrl) {
    const transporter: Transporter = nodemailer.createTransport(config.smtpUrl);
    return {
      async send(mail) {
        const info = await transporter.sendMail(mail);
        return { messageId: String(info.messageId ?? mail.messageId) };
      },
      close: () => transporter.close(),
    };
  }
  const streamer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  mkdirSync(config.mailDir, { recursive: true });
  return {
    async send(mail) {
      const info = await streamer.sendMail(mail);
      const safeId = mail.messageId.replace(/[^A-Za-z0-9._-]/g, '_');
      const file = join(config.mailDir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${safeId}.eml`);
      writeFileSync(file, info.message as Buffer);
      return { messageId: mail.messageId };
    },
    close: () => streamer.close(),
  };
}
