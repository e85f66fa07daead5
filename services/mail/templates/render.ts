import type { Context } from '../../kernel/context.js';
import type { MailJob, MailTemplate } from '../../kernel/jobs.js';
import { renderUserVerification } from './user-verification.template.js';

export interface RenderedMail {
  to: string;
  subject: string;
  text: string;
  html?: string;
  attachments?: { filename: string; content: string; contentType: string }[];
}

export type MailRenderer = (ctx: Context, job: MailJob) => Promise<RenderedMail | null>;

const RENDERERS: Partial<Record<MailTemplate, MailRenderer>> = {
  'user-verification': renderUserVerification,
};

/** Loads what the template needs and renders it; null when there is no longer anybody to write to. */
export async function renderMail(ctx: Context, job: MailJob): Promise<RenderedMail | null> {
  const renderer = RENDERERS[job.template];
  if (!renderer) throw new Error(`No renderer for mail template ${job.template}`);
  return renderer(ctx, job);
}
