import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type CachedListing, gzipOf, ListingCache, servable, weakEtag } from '../../services/booking/bookables-cache.js';

const entry = (bytes: number, overrides: Partial<CachedListing> = {}): CachedListing => ({
  token: 't1',
  resourceIds: ['r1'],
  computedAtMs: 1_000,
  validUntilMs: 61_000,
  answer: { body: Buffer.alloc(bytes, 'x'), etag: null },
  ...overrides,
});

describe('ListingCache', () => {
  it('serves an entry only from its computation until it expires', () => {
    const cache = new ListingCache();
    cache.store('k', entry(10));
    expect(cache.candidate('k', 999)).toBeUndefined();
    expect(cache.candidate('k', 1_000)).toBeDefined();
    expect(cache.candidate('k', 60_999)).toBeDefined();
    expect(cache.candidate('k', 61_000)).toBeUndefined();
    expect(cache.candidate('other', 2_000)).toBeUndefined();
    expect(servable(entry(1), 500)).toBe(false);
  });

  it('drops the least recently used entries beyond its entry and byte bounds', () => {
    const cache = new ListingCache({ entries: 2, bytes: 10_000 });
    cache.store('a', entry(10));
    cache.store('b', entry(10));
    // a used last: c pushes b out.
    cache.candidate('a', 2_000);
    cache.store('c', entry(10));
    expect(cache.candidate('b', 2_000)).toBeUndefined();
    expect(cache.candidate('a', 2_000)).toBeDefined();
    expect(cache.size.entries).toBe(2);

    const bytes = new ListingCache({ entries: 100, bytes: 1_000 });
    bytes.store('a', entry(400));
    bytes.store('b', entry(400));
    expect(bytes.size.entries).toBe(1);
    expect(bytes.candidate('b', 2_000)).toBeDefined();
    // Larger than the whole budget: not kept at all.
    bytes.store('huge', entry(2_000));
    expect(bytes.candidate('huge', 2_000)).toBeUndefined();
    // Replacing an entry counts its bytes once.
    bytes.store('b', entry(400));
    expect(bytes.size).toEqual({ entries: 1, bytes: 656 });
  });

  it('runs one computation for concurrent requests of a key under one token', async () => {
    const cache = new ListingCache();
    let runs = 0;
    const compute = async () => {
      runs++;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return entry(1);
    };
    const [a, b] = await Promise.all([cache.shared('k', 't1', compute), cache.shared('k', 't1', compute)]);
    expect(a).toBe(b);
    expect(runs).toBe(1);
    // Another token (a write since) is another computation, and a finished one is not reused.
    await cache.shared('k', 't2', compute);
    await cache.shared('k', 't1', compute);
    expect(runs).toBe(3);
  });
});

describe('rendered bodies', () => {
  it('are compressed once per body, to the same bytes when unzipped', async () => {
    const body = Buffer.from(JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ start: `2027-05-04T08:${String(i % 60).padStart(2, '0')}:00+02:00`, capacity_left: 1 }))));
    const first = gzipOf(body);
    expect(gzipOf(body)).toBe(first);
    const zipped = await first;
    expect(zipped.length).toBeLessThan(body.length / 3);
    expect(gunzipSync(zipped).equals(body)).toBe(true);
    // Another body with the same bytes is another entry's: compressed on its own.
    expect(gzipOf(Buffer.from(body))).not.toBe(first);
  });

  it('carry the weak ETag express would compute', () => {
    const body = Buffer.from('{"a":1}');
    const hash = createHash('sha1').update(body).digest('base64').slice(0, 27);
    expect(weakEtag(body)).toBe(`W/"7-${hash}"`);
  });
});
