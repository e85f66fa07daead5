import { createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';

/**
 * Signed cancel links: the consumer can cancel a booking alone, without login.
 *
 * A token is one base64url string (71 characters, no padding, no dots) of
 *   version (1 byte, = 1) | expiresAt (uint32, seconds since the epoch, big endian)
 *   | participation id (16 bytes, the UUID) | HMAC-SHA256 tag (32 bytes)
 * where the tag covers a context label and the first 21 bytes. The label keeps
 * a tag made with the same secret for another purpose from passing as a cancel
 * link. The version byte lets a later format (other ids, key rotation) coexist.
 *
 * The token is not secret from its holder (the id is not confidential); it
 * only cannot be forged or altered. A link is valid strictly before
 * `expiresAt` (whole seconds, rounded down). Every failure, whatever the
 * input, is DomainError('LINK_INVALID') (403); a forged token is told apart
 * from an expired one only after its signature has been checked.
 */

const VERSION = 1;
const CONTEXT = Buffer.from('booking.cancel-link\0', 'utf8');
const HEADER_BYTES = 1 + 4 + 16;
const TAG_BYTES = 32;
const TOKEN_BYTES = HEADER_BYTES + TAG_BYTES;
const TOKEN_PATTERN = new RegExp(`^[A-Za-z0-9_-]{${Math.ceil((TOKEN_BYTES * 4) / 3)}}$`);
const MAX_EXPIRY_SECONDS = 0xffff_ffff;

export interface CancelTokenClaims {
  participationId: string;
  expiresAt: Date;
}

const invalid = () => new DomainError('LINK_INVALID', 'The cancel link is invalid');
const expired = () => new DomainError('LINK_INVALID', 'The cancel link has expired');

function tag(secret: string, header: Buffer): Buffer {
  if (typeof secret !== 'string' || secret.length === 0) throw new DomainError('INTERNAL', 'The link signing secret is not configured');
  return createHmac('sha256', secret).update(CONTEXT).update(header).digest();
}

/** Signs a cancel token for a participation that stays valid until `expiresAt`. */
export function signCancelToken(secret: string, claims: CancelTokenClaims): string {
  // Bad claims are a fault of the calling service, never of the consumer.
  if (!isUuid(claims.participationId)) throw new DomainError('INTERNAL', 'A cancel link needs the participation UUID');
  const expiresMs = claims.expiresAt instanceof Date ? claims.expiresAt.getTime() : Number.NaN;
  const expiresSeconds = Math.floor(expiresMs / 1000);
  if (!Number.isFinite(expiresSeconds) || expiresSeconds < 0 || expiresSeconds > MAX_EXPIRY_SECONDS) {
    throw new DomainError('INTERNAL', 'A cancel link needs an expiry between 1970 and 2106');
  }
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt8(VERSION, 0);
  header.writeUInt32BE(expiresSeconds, 1);
  Buffer.from(claims.participationId.replace(/-/g, ''), 'hex').copy(header, 5);
  return Buffer.concat([header, tag(secret, header)]).toString('base64url');
}

/**
 * Checks a cancel token and returns the participation it names; tampered,
 * malformed, foreign or expired tokens throw LINK_INVALID (403).
 */
export function verifyCancelToken(secret: string, token: unknown, now: Date): { participationId: string } {
  if (typeof token !== 'string' || !TOKEN_PATTERN.test(token)) throw invalid();
  const bytes = Buffer.from(token, 'base64url');
  // The last character carries spare bits; only the canonical spelling is accepted, so every character matters.
  if (bytes.length !== TOKEN_BYTES || bytes.toString('base64url') !== token) throw invalid();
  const header = bytes.subarray(0, HEADER_BYTES);
  const expected = tag(secret, header);
  if (!timingSafeEqual(bytes.subarray(HEADER_BYTES), expected)) throw invalid();
  if (header.readUInt8(0) !== VERSION) throw invalid();
  const expiresMs = header.readUInt32BE(1) * 1000;
  const nowMs = now instanceof Date ? now.getTime() : Number.NaN;
  // Written so that an invalid `now` (NaN) counts as expired: fail closed.
  if (!(nowMs < expiresMs)) throw expired();
  return { participationId: formatUuid(header.subarray(5, HEADER_BYTES)) };
}

function formatUuid(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The public URL a consumer opens to cancel: `${publicBaseUrl}/cancel/${token}`. */
export function cancelLinkUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/cancel/${encodeURIComponent(token)}`;
}
