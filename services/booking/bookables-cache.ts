import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

/**
 * Rendered `upcoming_bookables` answers in process memory, so a repeated
 * listing costs one Redis MGET (the calendar versions) and a send.
 *
 * An entry holds the serialized body and what it was computed under: the
 * change counters of its resources (services/kernel/calendar-version.ts),
 * read before the computation began, and the clock time. It is served only
 * while the counters read for the new request are the stored ones (any
 * write that changed the resources' capacity since moved them, before its
 * request answered), while the clock lies in [computed at, valid until)
 * (valid until: the earliest instant the answer changes by time alone), and
 * never when the request asks for `Cache-Control: no-cache`.
 *
 * Bounded by entries and bytes; least recently used go first. Requests for
 * the same answer under the same counters while one computes it wait for
 * that computation instead of starting their own.
 */

/** Entries kept at most. */
export const LISTING_CACHE_ENTRIES = 500;
/** Bytes of bodies kept at most (a month of a busy calendar is about 0.5 MB). */
export const LISTING_CACHE_BYTES = 64 * 1024 * 1024;

/** A rendered answer: a body, or none (204). */
export interface RenderedAnswer {
  body: Buffer | null;
  /** Weak ETag of the body, in the form express gives. */
  etag: string | null;
}

export interface CachedListing {
  /** The calendar versions of `resourceIds` the answer was computed under. */
  token: string;
  resourceIds: readonly string[];
  computedAtMs: number;
  validUntilMs: number;
  answer: RenderedAnswer;
}

export class ListingCache {
  private readonly entries = new Map<string, CachedListing>();
  private readonly pending = new Map<string, Promise<CachedListing>>();
  private bytes = 0;

  constructor(private readonly limits: { entries: number; bytes: number } = { entries: LISTING_CACHE_ENTRIES, bytes: LISTING_CACHE_BYTES }) {}

  /** The entry of a request, if one was stored and may still apply at `nowMs` (the versions are the caller's to compare). */
  candidate(key: string, nowMs: number): CachedListing | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (!servable(entry, nowMs)) return undefined;
    // Most recently used last.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  store(key: string, entry: CachedListing): void {
    const previous = this.entries.get(key);
    if (previous) {
      this.entries.delete(key);
      this.bytes -= sizeOf(previous);
    }
    if (sizeOf(entry) > this.limits.bytes) return;
    this.entries.set(key, entry);
    this.bytes += sizeOf(entry);
    for (const [oldKey, old] of this.entries) {
      if (this.entries.size <= this.limits.entries && this.bytes <= this.limits.bytes) break;
      this.entries.delete(oldKey);
      this.bytes -= sizeOf(old);
    }
  }

  /**
   * Runs `compute` once for concurrent requests of one key under one token:
   * a request arriving while it runs gets the same promise.
   */
  shared(key: string, token: string, compute: () => Promise<CachedListing>): Promise<CachedListing> {
    const flight = `${key}\n${token}`;
    let running = this.pending.get(flight);
    if (!running) {
      running = compute().finally(() => this.pending.delete(flight));
      this.pending.set(flight, running);
    }
    return running;
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}

/** Whether an entry answers a request at `nowMs`: not computed later than now (a clock set back), and not expired. */
export const servable = (entry: CachedListing, nowMs: number): boolean => entry.computedAtMs <= nowMs && nowMs < entry.validUntilMs;

const sizeOf = (entry: CachedListing): number => (entry.answer.body?.length ?? 0) + 256;

/** A weak ETag of a body as express computes it (length and SHA-1), once per rendered answer instead of once per send. */
export function weakEtag(body: Buffer): string {
  const hash = createHash('sha1').update(body).digest('base64').slice(0, 27);
  return `W/"${body.length.toString(16)}-${hash}"`;
}

/** Bodies smaller than this go out uncompressed: gzip's framing and the client's work would not pay. */
export const GZIP_MIN_BYTES = 1024;

const gzipAsync = promisify(gzip);
/** The gzip of each rendered body, made on the first request that accepts it; it goes with its body (and its cache entry). */
const gzipped = new WeakMap<Buffer, Promise<Buffer>>();

/**
 * A rendered body gzip-compressed, once per body however many requests ask
 * (off the event loop, in libuv's pool). A listing of a month compresses to
 * about a tenth. Not counted in the cache's byte budget.
 */
export function gzipOf(body: Buffer): Promise<Buffer> {
  let compressed = gzipped.get(body);
  if (!compressed) {
    compressed = gzipAsync(body);
    gzipped.set(body, compressed);
    // A failure is not kept: the next request tries again.
    compressed.catch(() => gzipped.delete(body));
  }
  return compressed;
}
