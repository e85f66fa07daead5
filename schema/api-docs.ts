import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import express from 'express';
import type { Config } from '../services/kernel/config.js';
import type { Route } from './rest/http.js';
import { buildOpenApiDocument } from './rest/openapi/document.js';

const require = createRequire(import.meta.url);

/** The renderer's browser bundle, served from node_modules so the page needs no CDN. */
const RENDERER_PATH = require.resolve('@scalar/api-reference/browser/standalone.js');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Booking service REST API</title>
</head>
<body>
<div id="api-reference"></div>
<script src="/docs/renderer.js"></script>
<script>Scalar.createApiReference('#api-reference', { url: '/openapi.json', withDefaultFonts: false });</script>
</body>
</html>
`;

/** `GET /openapi.json` (generated from the route table), `GET /docs` (the rendered reference) and its script. */
export function apiDocsRouter(config: Config, routes: Route[]): express.Router {
  const router = express.Router();
  let document: string | undefined;
  let renderer: Promise<Buffer> | undefined;
  router.get('/openapi.json', (_req, res) => {
    document ??= JSON.stringify(buildOpenApiDocument(routes, config.publicBaseUrl));
    res.type('application/json; charset=utf-8').set('Cache-Control', 'no-cache').send(document);
  });
  router.get('/docs', (_req, res) => {
    res.type('html').send(PAGE);
  });
  router.get('/docs/renderer.js', async (_req, res, next) => {
    try {
      renderer ??= readFile(RENDERER_PATH);
      res.type('text/javascript; charset=utf-8').set('Cache-Control', 'public, max-age=3600').send(await renderer);
    } catch (error) {
      renderer = undefined;
      next(error);
    }
  });
  return router;
}
