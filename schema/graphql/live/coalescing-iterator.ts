import type { LiveItem } from '../../../services/live/capacity-feed.service.js';

export interface CoalesceOptions {
  /** How long the first value of a key waits for later ones; the last value within the window wins. 0 delivers at once. */
  windowMs: number;
  /** Keys that may wait for a consumer at once; one more fails the iterator with `overflowError()`. */
  maxPending: number;
  /** Values delivered in one batch at most. */
  maxBatch: number;
  /** Keys whose last delivered version is remembered, so a stale value arriving late is dropped. */
  rememberDelivered?: number;
  overflowError: () => Error;
  now?: () => number;
}

/** The coalesced stream: batches of values; `return()` ends it and unsubscribes from the source. */
export interface CoalescedIterator<T> extends AsyncIterableIterator<T[]> {
  return(): Promise<IteratorResult<T[]>>;
  /** Keys waiting for the consumer. */
  readonly pendingCount: number;
}

interface Pending<T> {
  value: T;
  version: number;
  dueAt: number;
}

/**
 * Reads `source` eagerly (so nothing piles up upstream, e.g. in a pub/sub
 * repeater), turns each value into keyed items and keeps only the latest
 * item per key until it is delivered. Delivery is in batches: every item
 * whose window has passed, oldest first. Memory is bounded by
 * `maxPending` keys whatever the consumer's speed: a slow consumer sees
 * fewer, newer values, and one so far behind that more keys wait than
 * allowed gets an error (it should resubscribe and refetch) instead of
 * growing the gateway's memory.
 */
export function coalesce<S, T>(source: AsyncIterable<S>, expand: (value: S) => LiveItem<T>[], options: CoalesceOptions): CoalescedIterator<T> {
  return new Coalescer(source, expand, options);
}

class Coalescer<S, T> implements CoalescedIterator<T> {
  private readonly pending = new Map<string, Pending<T>>();
  private readonly delivered = new Map<string, number>();
  private readonly iterator: AsyncIterator<S>;
  private readonly now: () => number;
  private failure: Error | undefined;
  private sourceDone = false;
  private closed = false;
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    source: AsyncIterable<S>,
    private readonly expand: (value: S) => LiveItem<T>[],
    private readonly options: CoalesceOptions,
  ) {
    this.iterator = source[Symbol.asyncIterator]();
    this.now = options.now ?? Date.now;
    void this.pump();
  }

  [Symbol.asyncIterator](): CoalescedIterator<T> {
    return this;
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  async next(): Promise<IteratorResult<T[]>> {
    for (;;) {
      if (this.failure) {
        const failure = this.failure;
        this.failure = undefined;
        this.closed = true;
        throw failure;
      }
      if (this.closed) return { done: true, value: undefined };
      const first = this.pending.values().next();
      if (!first.done) {
        const wait = first.value.dueAt - this.now();
        if (wait <= 0) return { done: false, value: this.takeDue() };
        await this.sleep(wait);
        continue;
      }
      if (this.sourceDone) {
        this.closed = true;
        return { done: true, value: undefined };
      }
      await this.sleep();
    }
  }

  async return(): Promise<IteratorResult<T[]>> {
    this.close();
    await this.iterator.return?.();
    return { done: true, value: undefined };
  }

  async throw(error?: unknown): Promise<IteratorResult<T[]>> {
    await this.return();
    throw error;
  }

  private async pump(): Promise<void> {
    try {
      while (!this.closed && !this.failure) {
        const result = await this.iterator.next();
        if (result.done) break;
        if (this.closed) break;
        for (const item of this.expand(result.value)) this.offer(item);
      }
    } catch (error) {
      this.failure ??= error instanceof Error ? error : new Error(String(error));
    }
    this.sourceDone = true;
    // Stop the upstream subscription as soon as this iterator cannot use it any more.
    if (this.failure) await this.iterator.return?.();
    this.signal();
  }

  private offer(item: LiveItem<T>): void {
    if (this.closed || this.failure) return;
    const current = this.pending.get(item.key);
    if (current) {
      if (item.version >= current.version) {
        current.value = item.value;
        current.version = item.version;
      }
      return;
    }
    const last = this.delivered.get(item.key);
    if (last !== undefined && item.version < last) return;
    if (this.pending.size >= this.options.maxPending) {
      this.failure = this.options.overflowError();
      this.pending.clear();
      this.signal();
      return;
    }
    this.pending.set(item.key, { value: item.value, version: item.version, dueAt: this.now() + this.options.windowMs });
    if (this.pending.size === 1) this.signal();
  }

  private takeDue(): T[] {
    const now = this.now();
    const batch: T[] = [];
    const remember = this.options.rememberDelivered ?? 0;
    for (const [key, entry] of this.pending) {
      if (entry.dueAt > now || batch.length >= this.options.maxBatch) break;
      this.pending.delete(key);
      batch.push(entry.value);
      if (remember > 0) {
        this.delivered.delete(key);
        this.delivered.set(key, entry.version);
        if (this.delivered.size > remember) this.delivered.delete(this.delivered.keys().next().value!);
      }
    }
    return batch;
  }

  private close(): void {
    this.closed = true;
    this.pending.clear();
    this.signal();
  }

  /** Waits until `signal()` or, with `ms`, until that time has passed. */
  private sleep(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      if (ms !== undefined) this.timer = setTimeout(() => this.signal(), ms);
    });
  }

  private signal(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
