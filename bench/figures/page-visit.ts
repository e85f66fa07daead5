import { flood } from '../http-load.js';
import { round } from '../lib/stats.js';
import { extensionFigure, type Figure } from './figure.js';

export const PAGE_VISIT_WHAT = 'a booking page visit: GET /book/:ref, one week of upcoming_bookables, public_data; 50 connections';

/** Adds `days` to a calendar day written yyyy-MM-dd. */
const plusDays = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/**
 * What a visitor of the booking page costs the service: the requests the
 * page makes over HTTP when it opens (the page itself, the first week of
 * slots, the resource's public data; its browser files are cached and its
 * live calendar is a WebSocket), in turn on 50 keep-alive connections for
 * `seconds` (autocannon). visits/s = answered sequences per second. An
 * extension of issue 10's table: a booking page must not be the next
 * calendar that stalls the gateway.
 */
export async function measurePageVisits(baseUrl: string, resourceId: string, today: string, b0: Figure | undefined, seconds: number): Promise<Figure> {
  const week = `from=${today}T00:00&to=${plusDays(today, 7)}T00:00`;
  const requests = [
    { method: 'GET' as const, path: `/book/${resourceId}` },
    { method: 'GET' as const, path: `/resources/${resourceId}/upcoming_bookables?groupFormat=yyyy-MM-dd&channelKey=RESOURCE_PUBLIC&${week}` },
    { method: 'POST' as const, path: `/resources/public_data?ref=${resourceId}&channelKey=RESOURCE_PUBLIC` },
  ];
  const result = await flood({ url: baseUrl, connections: 50, seconds, requests });
  const visits = result.requestsPerSecond / requests.length;
  const figure = extensionFigure({ id: 'page visit', what: PAGE_VISIT_WHAT, unit: 'visits/s', baseline: b0 }, visits, {
    requestsPerSecond: round(result.requestsPerSecond, 1),
    non2xx: result.non2xx,
    errors: result.errors,
    latencyP50Ms: result.latencyP50Ms,
    latencyP99Ms: result.latencyP99Ms,
    seconds: result.seconds,
  });
  // Only answered sequences count (2xx); anything else is said next to the number.
  return result.non2xx || result.errors ? { ...figure, error: `${result.non2xx} non-2xx answers, ${result.errors} connection errors` } : figure;
}
