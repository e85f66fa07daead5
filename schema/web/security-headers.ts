/**
 * Headers of the booking page. The Content-Security-Policy allows exactly
 * what the page uses: its own scripts and styles (no inline code; the
 * configuration is a JSON data block, which is not executed), fetch and the
 * WebSocket to its own origin (`'self'` covers ws:/wss: of the same host),
 * nothing else.
 *
 * Framing: the standalone page (`/book/:ref`) may not be framed at all
 * (`frame-ancestors 'none'`, and `X-Frame-Options: DENY` for old browsers),
 * so nobody can overlay the public link. The widget's frame
 * (`/book/:ref?embed=1`, what `/embed.js` loads) may be framed by any site,
 * since providers embed it on sites the service does not know; the page has
 * no session, cookie or stored credential a framing site could abuse, so
 * clickjacking could at most submit what the visitor typed in themselves.
 */
export function pageSecurityHeaders(options: { frameable: boolean }): Record<string, string> {
  const policy = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${options.frameable ? '*' : "'none'"}`,
  ].join('; ');
  const headers: Record<string, string> = {
    'Content-Security-Policy': policy,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  };
  if (!options.frameable) {
    headers['X-Frame-Options'] = 'DENY';
    headers['Cross-Origin-Opener-Policy'] = 'same-origin';
  }
  return headers;
}
