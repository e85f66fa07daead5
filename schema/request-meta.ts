import type { IncomingMessage } from 'node:http';
import { newId } from '../services/kernel/ids.js';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,100}$/;

const requestIds = new WeakMap<IncomingMessage, string>();
const crmIds = new WeakMap<IncomingMessage, string>();

/** The caller's X-Request-Id when it is sane, else a new one; the same for every call on one request. */
export function requestIdOf(req: IncomingMessage): string {
  let id = requestIds.get(req);
  if (id) return id;
  const header = req.headers['x-request-id'];
  const value = Array.isArray(header) ? header[0] : header;
  id = value && REQUEST_ID_PATTERN.test(value) ? value : newId();
  requestIds.set(req, id);
  return id;
}

/** Remembers which CRM a request authenticated as, for its access log line. */
export function noteCrm(req: IncomingMessage, crmId: string | undefined): void {
  if (crmId) crmIds.set(req, crmId);
}

/** The CRM the request authenticated as, if any. */
export const crmIdOf = (req: IncomingMessage): string | undefined => crmIds.get(req);

/** The `language` cookie (e.g. `language=en`), which overrides the CRM's default language for new users. */
export function languageFromCookie(cookie: string | undefined): string | undefined {
  if (!cookie) return undefined;
  for (const part of cookie.split(';')) {
    const [name, value] = part.trim().split('=');
    if (name === 'language' && value && /^(de|en)$/i.test(value)) return value.toLowerCase();
  }
  return undefined;
}
