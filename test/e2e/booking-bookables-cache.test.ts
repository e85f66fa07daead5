import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BookingFixture, setupBookable } from '../support/booking-fixtures.js';
import { book, bookablesOf, publicClient, reserve, slotOf, upcoming } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import type { ApiClient, HttpResult } from '../support/http.js';
import { type ChildGateway, startChildGateway } from '../support/live.js';

const MINUTE = 60_000;
const NO_CACHE = { 'Cache-Control': 'no-cache' };

/**
 * The cached upcoming_bookables answer (services/booking/bookables-cache.ts):
 * repeated listings come from memory, and a listing that starts after a
 * booking answered never shows that place as free, whichever gateway took it.
 */
describe('booking flow: upcoming_bookables from the cache', () => {
  let app: TestApp;
  let pub: ApiClient;
  let gatewayB: ChildGateway | undefined;

  beforeAll(async () => {
    app = await startTestApp();
    pub = app.anonymous;
  });
  afterEach(() => app.clock.reset());
  afterAll(async () => {
    await gatewayB?.stop();
    await app?.close();
  });

  const cacheOf = (res: HttpResult) => res.headers.get('x-cache');
  const starts = (res: HttpResult) => bookablesOf(res.body).map((b) => new Date(b.start).toISOString());
  const statusOf = (path: string, headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const request = http.get(`${app.baseUrl}${path}`, { headers }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode!));
      });
      request.on('error', reject);
    });
  /** A GET with node:http, which sends only the headers given and leaves the body as it came (fetch asks for gzip and decodes it). */
  const raw = (path: string, headers: Record<string, string>) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const request = http.get(`${app.baseUrl}${path}`, { headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
      });
      request.on('error', reject);
    });
  const get = (f: BookingFixture, headers: Record<string, string> = {}, query = '') =>
    pub.get(`/resources/${f.resourceUuid}/upcoming_bookables${query ? `?${query}` : ''}`, headers);

  it('answers a repeated request from memory, with the same body and ETag; If-None-Match gets 304', async () => {
    const f = await setupBookable(app, { capacity: 1, slots: 4 });
    const first = await get(f);
    expect(first.status).toBe(200);
    expect(cacheOf(first)).toBe('MISS');
    const second = await get(f);
    expect(cacheOf(second)).toBe('HIT');
    expect(second.text).toBe(first.text);
    expect(second.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
    // fetch() adds Cache-Control: no-cache to conditional requests, so ask with node:http.
    expect(await statusOf(`/resources/${f.resourceUuid}/upcoming_bookables`, { 'If-None-Match': first.headers.get('etag')! })).toBe(304);
    // Other parameters are another answer.
    expect(cacheOf(await get(f, {}, 'groupFormat=MMMM'))).toBe('MISS');
  });

  it('sends the answer gzip-compressed to a client that asks for it, plain to every other, with one ETag', async () => {
    const f = await setupBookable(app, { capacity: 1, slots: 12 });
    const path = `/resources/${f.resourceUuid}/upcoming_bookables`;
    const plain = await raw(path, {});
    expect(plain.status).toBe(200);
    expect(plain.body.length).toBeGreaterThan(1024);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toMatch(/Accept-Encoding/);
    const zipped = await raw(path, { 'Accept-Encoding': 'gzip, deflate, br' });
    expect(zipped.status).toBe(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(zipped.headers.vary).toMatch(/Accept-Encoding/);
    expect(Number(zipped.headers['content-length'])).toBe(zipped.body.length);
    expect(zipped.body.length).toBeLessThan(plain.body.length / 3);
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    expect(zipped.headers.etag).toBe(plain.headers.etag);
    // Refused or not offered: plain.
    for (const refusing of ['identity', 'gzip;q=0, identity', 'br']) {
      const answer = await raw(path, { 'Accept-Encoding': refusing });
      expect(answer.headers['content-encoding'], refusing).toBeUndefined();
      expect(answer.body.equals(plain.body), refusing).toBe(true);
    }
    // A conditional request of a gzip client is answered 304 like any other.
    const conditional = await raw(path, { 'Accept-Encoding': 'gzip', 'If-None-Match': plain.headers.etag! });
    expect(conditional.status).toBe(304);
    expect(conditional.body.length).toBe(0);
    // A fresh computation (another body) is compressed anew.
    expect((await book(pub, f)).status).toBe(201);
    const after = await raw(path, { 'Accept-Encoding': 'gzip' });
    expect(after.headers['x-cache']).toBe('MISS');
    expect(bookablesOf(JSON.parse(gunzipSync(after.body).toString('utf8')))).toHaveLength(11);
  });

  it('leaves an answer under 1 KB uncompressed', async () => {
    const f = await setupBookable(app, { capacity: 1, slots: 1 });
    const path = `/resources/${f.resourceUuid}/upcoming_bookables`;
    const plain = await raw(path, {});
    expect(plain.body.length).toBeLessThan(1024);
    const asked = await raw(path, { 'Accept-Encoding': 'gzip' });
    expect(asked.headers['content-encoding']).toBeUndefined();
    expect(asked.body.equals(plain.body)).toBe(true);
  });

  it('Cache-Control: no-cache computes the answer afresh', async () => {
    const f = await setupBookable(app, { slots: 2 });
    await get(f);
    expect(cacheOf(await get(f))).toBe('HIT');
    const fresh = await get(f, NO_CACHE);
    expect(cacheOf(fresh)).toBe('MISS');
    expect(bookablesOf(fresh.body)).toHaveLength(2);
  });

  it('a booking shows in the very next listing, though that listing was cached', async () => {
    const f = await setupBookable(app, { capacity: 1, slots: 4 });
    await get(f);
    expect(cacheOf(await get(f))).toBe('HIT');
    expect((await book(pub, f)).status).toBe(201);
    const after = await get(f);
    expect(cacheOf(after)).toBe('MISS');
    expect(starts(after)).toEqual([slotOf(f, 1).from, slotOf(f, 2).from, slotOf(f, 3).from]);

    // A hold too: the next listing counts it.
    const group = await setupBookable(app, { capacity: 3, slots: 2 });
    await get(group);
    expect(cacheOf(await get(group))).toBe('HIT');
    expect((await reserve(pub, group)).status).toBe(200);
    expect(bookablesOf((await get(group)).body)[0]).toMatchObject({ kind: 'models.LotAppointment', capacity_left: 2 });
  });

  it('a booking through a second gateway process shows in the very next listing of this one, and the other way round', async () => {
    gatewayB ??= await startChildGateway(app);
    const other = publicClient(gatewayB.baseUrl);
    const f = await setupBookable(app, { capacity: 1, slots: 4 });
    await get(f);
    expect(cacheOf(await get(f))).toBe('HIT');
    await upcoming(other, f.resourceUuid);
    expect((await upcoming(other, f.resourceUuid)).headers.get('x-cache')).toBe('HIT');

    expect((await book(other, f)).status).toBe(201);
    expect(starts(await get(f))).toEqual([slotOf(f, 1).from, slotOf(f, 2).from, slotOf(f, 3).from]);

    expect((await book(pub, f, { start: slotOf(f, 1).from, end: slotOf(f, 1).to })).status).toBe(201);
    const seenByB = await upcoming(other, f.resourceUuid);
    expect(starts(seenByB)).toEqual([slotOf(f, 2).from, slotOf(f, 3).from]);
  });

  it('a place held until the hold expires is free again at that instant of the clock, without any write', async () => {
    const f = await setupBookable(app, { capacity: 2, slots: 2 });
    app.clock.set(new Date(Date.parse(f.slot.from) - 60 * MINUTE));
    expect((await reserve(pub, f)).status).toBe(200);
    expect(bookablesOf((await get(f)).body)[0]).toMatchObject({ kind: 'models.LotAppointment', capacity_left: 1 });
    // An answer lives 60 s at most; 30 s before the hold expires a fresh one still counts it, and is served again.
    app.clock.advance(3 * MINUTE - 30_000);
    expect(bookablesOf((await get(f)).body)[0].capacity_left).toBe(1);
    app.clock.advance(29_000);
    const stillHeld = await get(f);
    expect(cacheOf(stillHeld)).toBe('HIT');
    expect(bookablesOf(stillHeld.body)[0].capacity_left).toBe(1);
    app.clock.advance(1000);
    const expired = await get(f);
    expect(cacheOf(expired)).toBe('MISS');
    expect(bookablesOf(expired.body)[0].capacity_left).toBe(2);
  });

  it('the first listed slot leaves the answer when it starts', async () => {
    const f = await setupBookable(app, { slots: 3 });
    app.clock.set(new Date(Date.parse(f.slot.from) - MINUTE));
    expect(starts(await get(f))).toHaveLength(3);
    expect(cacheOf(await get(f))).toBe('HIT');
    app.clock.set(new Date(Date.parse(f.slot.from)));
    const started = await get(f);
    expect(cacheOf(started)).toBe('MISS');
    expect(starts(started)).toEqual([slotOf(f, 1).from, slotOf(f, 2).from]);
  });

  it('an answer computed at a later clock time is not served when the clock is set back', async () => {
    const f = await setupBookable(app, { slots: 4 });
    app.clock.set(new Date(Date.parse(f.slot.from) + 45 * MINUTE));
    expect(starts(await get(f))).toEqual([slotOf(f, 2).from, slotOf(f, 3).from]);
    app.clock.reset();
    const now = await get(f);
    expect(cacheOf(now)).toBe('MISS');
    expect(starts(now)).toHaveLength(4);
  });

  it('the GraphQL query computes its answer afresh (only the REST body is cached)', async () => {
    const f = await setupBookable(app, { capacity: 1, slots: 2 });
    const query = 'query ($ref: String!) { upcomingBookables(ref: $ref) { groups { bookables { start capacityLeft } } } }';
    await get(f);
    expect((await book(pub, f)).status).toBe(201);
    const res = await pub.graphql(query, { ref: f.resourceUuid });
    expect(res.body.data.upcomingBookables.groups.flatMap((g: { bookables: unknown[] }) => g.bookables)).toHaveLength(1);
  });
});
