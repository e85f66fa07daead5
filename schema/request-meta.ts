import type { IncomingMessage } from 'node:http';
import { newId } from '../services/kernel/ids.js';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,100}$/;

/** The caller's X-Request-Id when it is sane, else a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const header = req.headers['x-request-id'];
  const value = Array.isArray(header) ? header[0] : header;
  return value && REQUEST_ID_PATTERN.test(value) ? value : newId();
}

/** The `language` cookie (e.g. `language=en`), which overrides the CRM's default language for new users. */
export function languageFromCookie(cookie: string | undefined): string | undefined {
  if (!cookie) return undefined;
  for (const part of cookie.split(';')) {
    const [name, value] = part.trim().split('=');
    if (name === 'language' && value && /^(de|en)$/i.test(value)) return value.toLowerCase();
  }
  return undefined;
}
