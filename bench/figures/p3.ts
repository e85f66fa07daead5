import { performance } from 'node:perf_hooks';
import { floodDiscardingBodies, type FloodResult } from '../http-load.js';
import { bookablesOf, bookDirectly, fetchListing, listingPath, nextConsumerEmail } from '../lib/booking.js';
import type { Slot } from '../lib/calendar.js';
import { type Api, describeFailure } from '../lib/http.js';
import { log, sleep } from '../lib/log.js';
import { median, percentile, round, tally } from '../lib/stats.js';
import { roundAll } from './baselines.js';
import { type Figure, limitFigure, ratioFigure } from './figure.js';

export const P3_WHAT = 'GET /resources/:ref/upcoming_bookables (defaults), 30 days half booked, 50 connections';
export const P3_WRITES_WHAT = 'P3 flood while a writer books that resource at 10/s; listing re-read after each booking';
export const P3_HISTORY_WHAT = 'cold listing (Cache-Control: no-cache) of a resource with 12 months of past bookings ÷ the 30-day resource';

export interface SingleClient {
  latenciesMs: number[];
  statuses: number[];
  bytes: number | null;
  bookables: number | null;
}

/** A few sequential listings by one client (the first may be the only uncached one). */
export async function singleClient(api: Api, resourceId: string, requests: number, deadline: number): Promise<SingleClient> {
  const result: SingleClient = { latenciesMs: [], statuses: [], bytes: null, bookables: null };
  for (let i = 0; i < requests && Date.now() < deadline; i++) {
    const answer = await fetchListing(api, resourceId, { timeoutMs: Math.max(1_000, deadline - Date.now()) });
    result.latenciesMs.push(answer.ms);
    result.statuses.push(answer.status);
    if (answer.status === 200) {
      result.bytes = answer.bytes;
      result.bookables = bookablesOf(answer.body).length;
    }
  }
  return result;
}

export function floodListing(api: Api, resourceId: string, seconds: number): Promise<FloodResult> {
  return floodDiscardingBodies({ url: api.baseUrl + listingPath(resourceId), connections: 50, seconds });
}

export function p3Figure(b0: Figure | undefined, single: SingleClient, result: FloodResult, expectedBookables: number): Figure {
  return ratioFigure(
    { id: 'P3', what: P3_WHAT, unit: 'req/s', baseline: b0, min: 0.1 },
    result.requestsPerSecond,
    { 'the listing answers 200 with the expected bookables': single.bookables === expectedBookables },
    {
      singleClientMs: single.latenciesMs.map((ms) => round(ms)),
      singleClientStatuses: tally(single.statuses),
      answerBytes: single.bytes,
      bookables: single.bookables,
      expectedBookables,
      flood: roundAll(result),
    },
  );
}

/**
 * P3 history: the cost of computing the listing afresh (`Cache-Control:
 * no-cache`) for the resource with a year of past bookings, against the
 * 30-day resource with the same future. One client, requests alternating
 * between the two, median of each.
 */
export async function measureHistory(api: Api, recentId: string, historyId: string, perResource: number, deadline: number): Promise<Figure> {
  const samples = { recent: [] as number[], history: [] as number[] };
  const statuses: number[] = [];
  const counts = { recent: null as number | null, history: null as number | null };
  for (let i = 0; i < perResource && Date.now() < deadline; i++) {
    for (const [key, id] of [['recent', recentId], ['history', historyId]] as const) {
      if (Date.now() >= deadline) break;
      const answer = await fetchListing(api, id, { noCache: true, timeoutMs: Math.max(1_000, deadline - Date.now()) });
      statuses.push(answer.status);
      if (answer.status === 200) {
        samples[key].push(answer.ms);
        counts[key] = bookablesOf(answer.body).length;
      }
    }
  }
  const recent = median(samples.recent);
  const history = median(samples.history);
  const ratio = recent && history !== null ? history / recent : null;
  return limitFigure(
    { id: 'P3 history', what: P3_HISTORY_WHAT, unit: 'ms median', max: 1.2, target: 'cost ≤ 1.2× 30-day', ratioOf: '30-day cost' },
    history,
    ratio,
    { 'both listings answered with the same bookables': counts.recent !== null && counts.recent === counts.history },
    {
      requestsEach: Math.min(samples.recent.length, samples.history.length),
      medianMs30Days: round(recent),
      medianMsHistory: round(history),
      statuses: tally(statuses),
      bookables30Days: counts.recent,
      bookablesHistory: counts.history,
    },
    ratio === null ? 'no listing answered in time' : undefined,
  );
}

/**
 * P3 under writes: the P3 flood while a writer books free slots of the same
 * resource at 10 bookings/s (one every 100 ms, whether or not the previous
 * one has answered, at most 30 in flight). After each booking answers 201
 * the writer reads the listing again (as a browser would, cache allowed) and
 * counts a violation when the booked slot is still listed with places left.
 */
export async function measureUnderWrites(api: Api, resourceId: string, freeSlots: Slot[], b0: Figure | undefined, seconds: number, deadline: number): Promise<Figure> {
  const slots = [...freeSlots].reverse();
  const tally_ = { booked: 0, bookFailures: [] as string[], verified: 0, unverified: [] as string[], violations: 0 };
  const recheckMs: number[] = [];
  let floodOver = false;
  const writes: Promise<void>[] = [];
  let inFlight = 0;
  const timeout = () => Math.max(1_000, Math.min(15_000, deadline - Date.now()));
  const writer = (async () => {
    const started = performance.now();
    for (let n = 0; !floodOver && slots.length; n++) {
      await sleep(started + n * 100 - performance.now());
      if (floodOver) break;
      if (inFlight >= 30) continue;
      const slot = slots.pop()!;
      inFlight++;
      writes.push(
        (async () => {
          try {
            const booked = await bookDirectly(api, slot, nextConsumerEmail('writer'), timeout());
            if (booked.status !== 201) return void tally_.bookFailures.push(describeFailure(booked));
            tally_.booked++;
            const listing = await fetchListing(api, resourceId, { timeoutMs: timeout() });
            if (listing.status !== 200 && listing.status !== 204) return void tally_.unverified.push(describeFailure(listing));
            tally_.verified++;
            recheckMs.push(listing.ms);
            const start = Date.parse(slot.start);
            if (bookablesOf(listing.body).some((b) => Date.parse(b.start) === start && b.capacity_left > 0)) tally_.violations++;
          } finally {
            inFlight--;
          }
        })(),
      );
    }
  })();
  const result = await floodListing(api, resourceId, seconds);
  floodOver = true;
  await writer;
  await Promise.all(writes);
  if (tally_.unverified.length) log(`P3 under writes: ${tally_.unverified.length} re-reads got no listing: ${JSON.stringify(tally(tally_.unverified))}`);
  return ratioFigure(
    { id: 'P3 under writes', what: P3_WRITES_WHAT, unit: 'req/s', baseline: b0, min: 0.05 },
    result.requestsPerSecond,
    { 'no booked slot listed as free after its booking returned': tally_.violations === 0, 'every booking re-checked': tally_.booked > 0 && tally_.verified === tally_.booked },
    {
      flood: roundAll(result),
      bookingsMade: tally_.booked,
      bookingsPerSecond: round(tally_.booked / result.seconds),
      bookingFailures: tally(tally_.bookFailures),
      reReads: tally_.verified,
      reReadsWithoutAnswer: tally(tally_.unverified),
      reReadP50Ms: round(percentile(recheckMs, 50)),
      violations: tally_.violations,
    },
  );
}
