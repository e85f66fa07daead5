import { escapeHtml } from '../../kernel/html.js';
import type { MailAttachment } from '../mail-transport.js';

/** The languages mails are written in; any other wish falls back (see mailLanguage). */
export type MailLanguage = 'de' | 'en';

export interface RenderedMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  attachments?: MailAttachment[];
}

/** What a template says; the layout turns it into plain text and simple HTML alike. */
export interface MailContent {
  to: string;
  subject: string;
  greeting: string;
  paragraphs: string[];
  /** Label/value rows, e.g. when and where; rows without a value are left out. */
  details?: [string, string | null | undefined][];
  /** Free text someone wrote (the CRM's or the consumer's message), shown as a quote. */
  quote?: { label: string; text: string } | null;
  link?: { label: string; url: string } | null;
  closing: string[];
  attachments?: MailAttachment[];
}

/**
 * The first of the candidates (customer language, booking locale, provider
 * language, ...) that names a language we write in; German otherwise.
 * `de-AT`, `en_GB` count as de and en.
 */
export function mailLanguage(...candidates: (string | null | undefined)[]): MailLanguage {
  for (const candidate of candidates) {
    const primary = candidate?.trim().toLowerCase().split(/[-_]/)[0];
    if (primary === 'de' || primary === 'en') return primary;
  }
  return 'de';
}

const htmlText = (value: string): string => escapeHtml(value).replace(/\r?\n/g, '<br>\n');

/** Plain text and HTML of one mail from the same content. */
export function composeMail(content: MailContent): RenderedMail {
  const details = (content.details ?? []).filter((row): row is [string, string] => Boolean(row[1]));
  const labelWidth = Math.max(0, ...details.map(([label]) => label.length)) + 2;

  const text: string[] = [content.greeting, '', ...content.paragraphs.flatMap((p) => [p, ''])];
  if (details.length) text.push(...details.map(([label, value]) => `${`${label}:`.padEnd(labelWidth)}${value}`), '');
  if (content.quote) text.push(`${content.quote.label}:`, ...content.quote.text.split(/\r?\n/).map((line) => `> ${line}`), '');
  if (content.link) text.push(`${content.link.label}:`, content.link.url, '');
  text.push(...content.closing);

  const html: string[] = [
    '<!doctype html>',
    '<html><body style="font-family: sans-serif; line-height: 1.4">',
    `<p>${htmlText(content.greeting)}</p>`,
    ...content.paragraphs.map((p) => `<p>${htmlText(p)}</p>`),
  ];
  if (details.length) {
    html.push(
      '<table style="border-collapse: collapse">',
      ...details.map(([label, value]) => `<tr><th style="text-align: left; padding-right: 1em; vertical-align: top">${escapeHtml(label)}</th><td>${htmlText(value)}</td></tr>`),
      '</table>',
    );
  }
  if (content.quote) {
    html.push(`<p>${escapeHtml(content.quote.label)}:</p>`, `<blockquote style="border-left: 3px solid #ccc; margin: 0; padding-left: 1em">${htmlText(content.quote.text)}</blockquote>`);
  }
  if (content.link) html.push(`<p><a href="${escapeHtml(content.link.url)}">${escapeHtml(content.link.label)}</a></p>`);
  html.push(`<p>${content.closing.map(htmlText).join('<br>\n')}</p>`, '</body></html>');

  return {
    to: content.to,
    subject: content.subject,
    text: `${text.join('\n').trimEnd()}\n`,
    html: `${html.join('\n')}\n`,
    attachments: content.attachments?.length ? content.attachments : undefined,
  };
}
