import { createHmac, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cancelLinkUrl, signCancelToken, verifyCancelToken } from '../../services/booking/cancel-link.js';
import { DomainError } from '../../services/kernel/errors.js';

const SECRET = 'unit-test-link-signing-secret';
const PARTICIPATION = '3f2a9c4e-8b1d-4e6f-9a7c-0d5e2b8f1a63';
const NOW = new Date('2026-05-04T07:30:00Z');
const LATER = new Date('2026-05-11T07:30:00Z');
const URL_SAFE = /^[A-Za-z0-9_-]+$/;

const sign = (participationId = PARTICIPATION, expiresAt = LATER, secret = SECRET) => signCancelToken(secret, { participationId, expiresAt });

/** Runs verify and returns the DomainError it throws; fails if it returns or throws anything else. */
function rejection(token: unknown, now = NOW, secret = SECRET): DomainError {
  let outcome: unknown;
  try {
    outcome = verifyCancelToken(secret, token, now);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('LINK_INVALID');
    expect((error as DomainError).status).toBe(403);
    return error as DomainError;
  }
  throw new Error(`expected LINK_INVALID, got ${JSON.stringify(outcome)}`);
}

describe('signCancelToken / verifyCancelToken', () => {
  it('round-trips the participation id', () => {
    const token = sign();
    expect(verifyCancelToken(SECRET, token, NOW)).toEqual({ participationId: PARTICIPATION });
  });

  it('round-trips many random ids and normalises an upper-case id to lower case', () => {
    for (let i = 0; i < 200; i++) {
      const id = randomUUID();
      expect(verifyCancelToken(SECRET, sign(id), NOW).participationId).toBe(id);
    }
    expect(verifyCancelToken(SECRET, sign(PARTICIPATION.toUpperCase()), NOW).participationId).toBe(PARTICIPATION);
  });

  it('is compact and URL-safe: 71 base64url characters, no padding, no dots', () => {
    const token = sign();
    expect(token).toMatch(URL_SAFE);
    expect(token).toHaveLength(71);
    expect(encodeURIComponent(token)).toBe(token);
  });

  it('is deterministic for the same claims and differs for other claims', () => {
    expect(sign()).toBe(sign());
    expect(sign(randomUUID())).not.toBe(sign());
    expect(sign(PARTICIPATION, new Date(LATER.getTime() + 1000))).not.toBe(sign());
    expect(sign(PARTICIPATION, LATER, 'another-secret-of-enough-length')).not.toBe(sign());
  });

  it('carries a version byte 1 and the HMAC-SHA256 over a labelled header', () => {
    const bytes = Buffer.from(sign(), 'base64url');
    expect(bytes[0]).toBe(1);
    expect(bytes.readUInt32BE(1)).toBe(LATER.getTime() / 1000);
    expect(bytes.subarray(5, 21).toString('hex')).toBe(PARTICIPATION.replace(/-/g, ''));
    const expected = createHmac('sha256', SECRET).update('booking.cancel-link\0').update(bytes.subarray(0, 21)).digest();
    expect(bytes.subarray(21).equals(expected)).toBe(true);
  });

  it('refuses a token signed with another secret', () => {
    expect(rejection(sign(), NOW, 'a-completely-different-secret').message).toBe('The cancel link is invalid');
  });

  it('refuses a tag made with the same secret but without the cancel-link label', () => {
    const header = Buffer.from(sign(), 'base64url').subarray(0, 21);
    const bare = createHmac('sha256', SECRET).update(header).digest();
    expect(rejection(Buffer.concat([header, bare]).toString('base64url')).message).toBe('The cancel link is invalid');
  });

  describe('tampering', () => {
    const token = sign();
    const bytes = Buffer.from(token, 'base64url');

    it('refuses a change of any single byte (every bit position)', () => {
      for (let index = 0; index < bytes.length; index++) {
        for (let bit = 0; bit < 8; bit++) {
          const forged = Buffer.from(bytes);
          forged[index]! ^= 1 << bit;
          rejection(forged.toString('base64url'));
        }
      }
    });

    it('refuses a change of any single character of the token', () => {
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      for (let index = 0; index < token.length; index++) {
        for (const character of alphabet) {
          if (character === token[index]) continue;
          rejection(token.slice(0, index) + character + token.slice(index + 1));
        }
      }
    });

    it('refuses a longer expiry or another participation under the old tag', () => {
      const extended = Buffer.from(bytes);
      extended.writeUInt32BE(extended.readUInt32BE(1) + 86_400, 1);
      rejection(extended.toString('base64url'));
      const swapped = Buffer.from(bytes);
      Buffer.from(randomUUID().replace(/-/g, ''), 'hex').copy(swapped, 5);
      rejection(swapped.toString('base64url'));
    });

    it('refuses an unknown version even with a valid tag for it', () => {
      const header = Buffer.from(bytes.subarray(0, 21));
      header[0] = 2;
      const tag = createHmac('sha256', SECRET).update('booking.cancel-link\0').update(header).digest();
      rejection(Buffer.concat([header, tag]).toString('base64url'));
    });

    it('refuses truncated and extended tokens', () => {
      for (let length = 0; length < token.length; length++) rejection(token.slice(0, length));
      rejection(`${token}A`);
      rejection(`${token}==`);
      rejection(`A${token}`);
    });
  });

  describe('expiry', () => {
    it('is valid until just before expiresAt and refused from then on', () => {
      const token = sign();
      expect(verifyCancelToken(SECRET, token, new Date(LATER.getTime() - 1)).participationId).toBe(PARTICIPATION);
      expect(rejection(token, LATER).message).toBe('The cancel link has expired');
      expect(rejection(token, new Date(LATER.getTime() + 365 * 86_400_000)).message).toBe('The cancel link has expired');
    });

    it('rounds a fractional-second expiry down', () => {
      const token = sign(PARTICIPATION, new Date('2026-05-11T07:30:00.900Z'));
      expect(rejection(token, new Date('2026-05-11T07:30:00.000Z')).message).toBe('The cancel link has expired');
    });

    it('treats an invalid "now" as expired (fail closed)', () => {
      expect(rejection(sign(), new Date(Number.NaN)).message).toBe('The cancel link has expired');
      expect(() => verifyCancelToken(SECRET, sign(), undefined as unknown as Date)).toThrow('The cancel link has expired');
    });

    it('checks the signature before the expiry, so a forgery is never reported as merely expired', () => {
      const forged = Buffer.from(sign(PARTICIPATION, NOW), 'base64url');
      forged[30]! ^= 1;
      expect(rejection(forged.toString('base64url'), LATER).message).toBe('The cancel link is invalid');
    });
  });

  describe('malformed input never throws anything but LINK_INVALID', () => {
    const token = sign();
    it.each([
      ['undefined', undefined],
      ['null', null],
      ['a number', 42],
      ['an object', { token }],
      ['an array', [token]],
      ['a Buffer', Buffer.from(token)],
      ['a boolean', true],
      ['an empty string', ''],
      ['white space', '   '],
      ['the token with white space', ` ${token} `],
      ['the token with a newline', `${token}\n`],
      ['standard base64 characters', token.replace(/-/g, '+').replace(/_/g, '/')],
      ['a JWT-looking string', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc'],
      ['dots', `${token.slice(0, 20)}.${token.slice(21)}`],
      ['percent-encoding', encodeURIComponent('ä').repeat(20)],
      ['unicode', 'ä'.repeat(71)],
      ['emoji', '😀'.repeat(36)],
      ['NUL bytes', '\0'.repeat(71)],
      ['all A', 'A'.repeat(71)],
      ['all underscores', '_'.repeat(71)],
      ['a megabyte', 'A'.repeat(1_000_000)],
      ['a path', '../../etc/passwd'],
      ['SQL', "' OR 1=1 --"],
    ])('%s', (_name, input) => {
      rejection(input);
    });

    it('random strings of every length around the token length', () => {
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/.~ ';
      for (let i = 0; i < 2_000; i++) {
        const length = 60 + (i % 20);
        const text = Array.from({ length }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('');
        rejection(text);
      }
    });
  });

  describe('signing refuses bad claims as internal errors', () => {
    it.each([
      ['a non-UUID id', { participationId: 'p-1', expiresAt: LATER }],
      ['an empty id', { participationId: '', expiresAt: LATER }],
      ['an invalid expiry', { participationId: PARTICIPATION, expiresAt: new Date(Number.NaN) }],
      ['an expiry before 1970', { participationId: PARTICIPATION, expiresAt: new Date('1969-12-31T23:59:59Z') }],
      ['an expiry after 2106', { participationId: PARTICIPATION, expiresAt: new Date('2106-02-08T00:00:00Z') }],
    ])('%s', (_name, claims) => {
      expect(() => signCancelToken(SECRET, claims)).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
    });

    it('an empty secret', () => {
      expect(() => signCancelToken('', { participationId: PARTICIPATION, expiresAt: LATER })).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
    });
  });
});

describe('cancelLinkUrl', () => {
  it('appends /cancel/<token> to the public base URL', () => {
    const token = sign();
    expect(cancelLinkUrl('https://www.example.com', token)).toBe(`https://www.example.com/cancel/${token}`);
    expect(cancelLinkUrl('https://www.example.com/booking/', token)).toBe(`https://www.example.com/booking/cancel/${token}`);
  });

  it('the token read back from the URL verifies', () => {
    const url = new URL(cancelLinkUrl('http://localhost:4000', sign()));
    const token = decodeURIComponent(url.pathname.split('/').at(-1)!);
    expect(verifyCancelToken(SECRET, token, NOW).participationId).toBe(PARTICIPATION);
  });
});
