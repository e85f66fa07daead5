import { createHash } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import { bookingPageSubject } from '../../services/booking/booking-page.service.js';
import { type ContextRoot, createContext } from '../../services/kernel/context.js';
import { DomainError, toDomainError } from '../../services/kernel/errors.js';
import { escapeHtml } from '../../services/kernel/html.js';
import { requestIdOf } from '../request-meta.js';
import { listQuery, stringQuery } from '../rest/http.js';
import { pageSecurityHeaders } from './security-headers.js';
import { loadBookingAssets, sendAsset } from './static-assets.js';

export type PageLanguage = 'de' | 'en';

/** Where the browser files live; the version segment changes with their content, so they are cached for good. */
export const ASSET_PATH = '/assets/booking';

/** The modules booking.js imports: preloaded with the page, so the browser fetches them at once instead of one level after another. */
const MODULES = ['booking-api.js', 'booking-dom.js', 'booking-form.js', 'booking-ics.js', 'booking-live.js', 'booking-texts.js'];

const TEXT = {
  de: {
    title: 'Termin buchen',
    loading: 'Freie Termine werden geladen …',
    noscript: 'Diese Buchungsseite braucht JavaScript.',
    notFoundTitle: 'Seite nicht gefunden',
    notFound: 'Diese Buchungsseite gibt es nicht (mehr). Bitte prüfen Sie den Link oder fragen Sie den Anbieter nach dem aktuellen Link.',
    badRequestTitle: 'Ungültiger Link',
    badRequest: 'Dieser Link zur Buchungsseite ist ungültig:',
    failedTitle: 'Fehler',
    failed: 'Die Buchungsseite konnte gerade nicht geladen werden. Bitte versuchen Sie es in einigen Minuten erneut.',
  },
  en: {
    title: 'Book an appointment',
    loading: 'Loading free times …',
    noscript: 'This booking page needs JavaScript.',
    notFoundTitle: 'Page not found',
    notFound: 'This booking page does not exist (any more). Please check the link or ask the provider for the current one.',
    badRequestTitle: 'Invalid link',
    badRequest: 'This link to the booking page is not valid:',
    failedTitle: 'Error',
    failed: 'The booking page could not be loaded just now. Please try again in a few minutes.',
  },
};

/**
 * The consumer booking page `GET /book/:ref` (also the widget's frame, with
 * `embed=1`), its browser files under `/assets/booking/<version>/`, and the
 * embed script `GET /embed.js`. The page is a shell: the browser lists,
 * reserves and books through the public REST API and follows capacity over
 * the GraphQL subscription, like any other frontend would.
 */
export function bookingPageRouter(root: ContextRoot): express.Router {
  const assets = loadBookingAssets();
  // One version for the whole set: a module's relative imports then stay inside the same version.
  const version = createHash('sha256').update([...assets.values()].map((a) => a.version).join()).digest('base64url').slice(0, 12);
  const router = express.Router();

  router.get('/embed.js', (req, res) => {
    // Host pages of any origin load it; short caching so a fix reaches every embedder within minutes.
    res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    sendAsset(req, res, assets.get('embed.js')!, 'public, max-age=300');
  });

  router.get(`${ASSET_PATH}/:version/:name`, (req, res) => {
    const file = assets.get(req.params.name!);
    if (!file || file.name === 'embed.js') return notFoundAsset(res);
    // A page of the previous deployment asks for its old version: give it today's file, but never cache that.
    sendAsset(req, res, file, req.params.version === version ? 'public, max-age=31536000, immutable' : 'no-cache');
  });

  router.get('/book/:ref', async (req, res) => {
    const requestId = requestIdOf(req);
    let language: PageLanguage = languageOf(req, undefined);
    const embed = req.query.embed === '1';
    try {
      const lang = stringQuery(req.query, 'lang');
      if (lang !== undefined && lang !== 'de' && lang !== 'en') throw new DomainError('VALIDATION_FAILED', 'lang must be de or en');
      language = languageOf(req, lang);
      const week = stringQuery(req.query, 'week');
      if (week !== undefined && !isCalendarDay(week)) throw new DomainError('VALIDATION_FAILED', 'week must be a day as yyyy-MM-dd');
      const ctx = createContext(root, { requestId });
      const subject = await bookingPageSubject(ctx, req.params.ref!, listQuery(req.query, 'ref'), stringQuery(req.query, 'channelKey'));
      language = languageOf(req, lang, subject.providerLanguage);
      const config = {
        resources: subject.resources,
        providerName: subject.providerName,
        timeZone: subject.timeZone,
        channelKey: subject.channelKey,
        prdRef: stringQuery(req.query, 'prdRef') ?? null,
        week: week ?? null,
        lang: language,
        holdMs: root.config.holdMs,
        // The .ics the page offers gets the UID of the mail's invitation, so calendars merge the two.
        icsUidHost: new URL(root.config.publicBaseUrl).hostname,
        embed,
      };
      sendPage(res, 200, embed, pageHtml(language, subject.resources[0]!.name, config, version, embed));
    } catch (error) {
      const domainError = toDomainError(error);
      const text = TEXT[language];
      if (domainError.code === 'INTERNAL') root.logger.error('booking page failed', { requestId, error: error instanceof Error ? error.stack : String(error) });
      // The service's message stays below the plain words: it says e.g. that a short reference is ambiguous.
      const detail = `<p class="detail"><code>${escapeHtml(domainError.message)}</code></p>`;
      if (domainError.status === 404) return sendPage(res, 404, embed, messageHtml(language, text.notFoundTitle, `<p>${text.notFound}</p>${detail}`, version));
      if (domainError.status < 500) {
        return sendPage(res, domainError.status, embed, messageHtml(language, text.badRequestTitle, `<p>${text.badRequest}</p>${detail}`, version));
      }
      sendPage(res, 500, embed, messageHtml(language, text.failedTitle, `<p>${text.failed}</p>`, version));
    }
  });

  return router;
}

function notFoundAsset(res: Response): void {
  res.status(404).setHeader('X-Content-Type-Options', 'nosniff');
  res.type('text/plain').send('Not found');
}

/** A real day of the calendar written yyyy-MM-dd (not 2027-02-30). */
function isCalendarDay(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
}

/** `lang` when given, else the best of de/en the browser accepts, else the provider's language, else German. */
function languageOf(req: Request, lang: string | undefined, providerLanguage?: string): PageLanguage {
  if (lang === 'de' || lang === 'en') return lang;
  const accepted = req.headers['accept-language'] ? req.acceptsLanguages('de', 'en') : false;
  if (accepted === 'de' || accepted === 'en') return accepted;
  return providerLanguage === 'en' ? 'en' : 'de';
}

function sendPage(res: Response, status: number, embed: boolean, html: string): void {
  res.status(status);
  res.set(pageSecurityHeaders({ frameable: embed }));
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('Vary', 'Accept-Language');
  res.type('html').send(html);
}

/** JSON inside a `<script type="application/json">`: `<` escaped, so no value can end the element. */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c');

function head(language: PageLanguage, title: string, version: string): string {
  return `<!doctype html>
<html lang="${language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${ASSET_PATH}/${version}/booking.css">`;
}

function pageHtml(language: PageLanguage, resourceName: string, config: Record<string, unknown>, version: string, embed: boolean): string {
  const text = TEXT[language];
  return `${head(language, `${text.title} – ${resourceName}`, version)}
<script defer src="${ASSET_PATH}/${version}/graphql-ws.min.js"></script>
<script type="module" src="${ASSET_PATH}/${version}/booking.js"></script>
${MODULES.map((name) => `<link rel="modulepreload" href="${ASSET_PATH}/${version}/${name}">`).join('\n')}
<script type="application/json" id="booking-config">${scriptJson(config)}</script>
</head>
<body${embed ? ' class="embed"' : ''}>
<main id="booking-app" aria-busy="true">
<h1>${escapeHtml(resourceName)}</h1>
<p>${text.loading}</p>
<noscript><p>${text.noscript}</p></noscript>
</main>
</body>
</html>
`;
}

function messageHtml(language: PageLanguage, title: string, body: string, version: string): string {
  return `${head(language, title, version)}
</head>
<body>
<main id="booking-app" class="message">
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}
