import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Request, Response } from 'express';

/** One file the gateway serves to browsers, read and compressed once at start-up. */
export interface StaticAsset {
  name: string;
  contentType: string;
  body: Buffer;
  gzip: Buffer;
  brotli: Buffer;
  /** Short content hash: the `?v=` of the page's asset URLs and the ETag. */
  version: string;
}

/**
 * The project root, found from this file whether it runs from the sources
 * (tsx, vitest: `schema/web/`) or from the build (`dist/schema/web/`): the
 * browser files are not compiled, so both read them from `schema/web/public/`.
 */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('booking page: package.json not found above schema/web');
    dir = parent;
  }
  return dir;
}

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

function asset(name: string, path: string): StaticAsset {
  const body = readFileSync(path);
  const contentType = TYPES[name.slice(name.lastIndexOf('.'))];
  if (!contentType) throw new Error(`booking page: no content type for ${name}`);
  return {
    name,
    contentType,
    body,
    gzip: gzipSync(body, { level: 9 }),
    brotli: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    version: createHash('sha256').update(body).digest('base64url').slice(0, 12),
  };
}

/**
 * The browser files of the booking page and widget: ours from
 * `schema/web/public/`, and graphql-ws's own browser build (UMD, the global
 * `graphqlWs`) straight from node_modules, so the page runs the library the
 * server speaks with, with no build step.
 */
export function loadBookingAssets(): Map<string, StaticAsset> {
  const publicDir = join(projectRoot(), 'schema', 'web', 'public');
  // graphql-ws exports no ./umd subpath; its main entry sits in dist/, the UMD build beside it.
  const graphqlWsUmd = join(dirname(createRequire(import.meta.url).resolve('graphql-ws')), '..', 'umd', 'graphql-ws.min.js');
  const files: [string, string][] = [
    ['booking.js', join(publicDir, 'booking.js')],
    ['booking-api.js', join(publicDir, 'booking-api.js')],
    ['booking-dom.js', join(publicDir, 'booking-dom.js')],
    ['booking-form.js', join(publicDir, 'booking-form.js')],
    ['booking-ics.js', join(publicDir, 'booking-ics.js')],
    ['booking-live.js', join(publicDir, 'booking-live.js')],
    ['booking-texts.js', join(publicDir, 'booking-texts.js')],
    ['booking.css', join(publicDir, 'booking.css')],
    ['embed.js', join(publicDir, 'embed.js')],
    ['graphql-ws.min.js', graphqlWsUmd],
  ];
  return new Map(files.map(([name, path]) => [name, asset(name, path)]));
}

/**
 * Sends an asset compressed as the browser accepts (brotli, gzip or plain),
 * with a strong ETag. `immutable` for versioned URLs (the page names each
 * asset with `?v=<hash>`, so a new deployment changes the URL).
 */
export function sendAsset(req: Request, res: Response, file: StaticAsset, cacheControl: string): void {
  const etag = `"${file.version}"`;
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('ETag', etag);
  res.setHeader('Vary', 'Accept-Encoding');
  if (req.headers['if-none-match'] === etag) {
    res.status(304).end();
    return;
  }
  const encoding = req.acceptsEncodings('br', 'gzip', 'identity');
  const body = encoding === 'br' ? file.brotli : encoding === 'gzip' ? file.gzip : file.body;
  if (encoding === 'br' || encoding === 'gzip') res.setHeader('Content-Encoding', encoding);
  res.setHeader('Content-Length', String(body.length));
  res.status(200).end(req.method === 'HEAD' ? undefined : body);
}
