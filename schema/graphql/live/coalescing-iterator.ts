import type { LiveItem } from '../../../services/live/capacity-feed.service.js';

export interface CoalesceOptions {
  /**
   * The least time between two deliveries of one key. A key not delivered
   * within the window goes out at once; later values of it wait until the
   * window since its last delivery has passed, and the last of them wins. So
   * a burst on one slot reaches the consumer as at most two messages per
   * window, and a single change is never delayed. 0 delivers everything at once.
   */
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

/**
 * A source that calls `listener` with each value as it arrives (a listener
 * on an event target) until the function it returns is called.
 */
export type PushSource<S> = (listener: (value: S) => void) => () => void;

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
 * repeater; a push source hands each value over as it arrives, with no
 * queue of its own), turns each value into keyed items and keeps only the latest
 * item per key until it is delivered. Delivery is in batches: every item
 * that is due (see `windowMs`), oldest first. Memory is bounded by
 * `maxPending` keys whatever the consumer's speed: a slow consumer sees
 * fewer, newer values, and one so far behind that more keys wait than
 * allowed gets an error (it should resubscribe and refetch) instead of
 * growing the gateway's memory.
 */
export function coalesce<S, T>(source: AsyncIterable<S> | PushSource<S>, expand: (value: S) => LiveItem<T>[], options: CoalesceOptions): CoalescedIterator<T> {
  return new Coalescer(source, expand, options);
}

class Coalescer<S, T> implements CoalescedIterator<T> {
  private readonly pending = new Map<string, Pending<T>>();
  private readonly delivered = new Map<string, number>();
  /** When each key was last delivered, oldest first; only the last `windowMs` matter. */
  private readonly deliveredAt = new Map<string, number>();
  /** The source as an iterator, read by pump(); undefined for a push source. */
  private readonly iterator: AsyncIterator<S> | undefined;
  /** Ends a push source's listening; undefined for an iterator. */
  private unlisten: (() => void) | undefined;
  private readonly now: () => number;
  private failure: Error | undefined;
  private sourceDone = false;
  private closed = false;
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    source: AsyncIterable<S> | PushSource<S>,
    private readonly expand: (value: S) => LiveItem<T>[],
    private readonly options: CoalesceOptions,
  ) {
    this.now = options.now ?? Date.now;
    if (typeof source === 'function') {
      // Thousands of live calendars hear every change: handed over directly, a change costs each of them no queue and no promise.
      this.unlisten = source((value) => this.receive(value));
    } else {
      this.iterator = source[Symbol.asyncIterator]();
      void this.pump();
    }
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
      if (this.pending.size) {
        let due = Infinity;
        for (const entry of this.pending.values()) due = Math.min(due, entry.dueAt);
        const wait = due - this.now();
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
    this.stopListening();
    await this.iterator?.return?.();
    return { done: true, value: undefined };
  }

  async throw(error?: unknown): Promise<IteratorResult<T[]>> {
    await this.return();
    throw error;
  }

  /** A value of a push source: expanded and offered at once; a failure ends the listening (as pump ends its iterator). */
  private receive(value: S): void {
    if (this.closed || this.failure) return;
    try {
      for (const item of this.expand(value)) this.offer(item);
    } catch (error) {
      this.failure ??= error instanceof Error ? error : new Error(String(error));
    }
    if (this.failure) {
      this.stopListening();
      this.signal();
    }
  }

  private stopListening(): void {
    const unlisten = this.unlisten;
    this.unlisten = undefined;
    unlisten?.();
  }

  private async pump(): Promise<void> {
    const iterator = this.iterator!;
    try {
      while (!this.closed && !this.failure) {
        const result = await iterator.next();
        if (result.done) break;
        if (this.closed) break;
        for (const item of this.expand(result.value)) this.offer(item);
      }
    } catch (error) {
      this.failure ??= error instanceof Error ? error : new Error(String(error));
    }
    this.sourceDone = true;
    // Stop the upstream subscription as soon as this iterator cannot use it any more.
    if (this.failure) await iterator.return?.();
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
    const now = this.now();
    const lastAt = this.deliveredAt.get(item.key);
    const dueAt = lastAt === undefined ? now : Math.max(now, lastAt + this.options.windowMs);
    this.pending.set(item.key, { value: item.value, version: item.version, dueAt });
    // Wake the consumer for a value due now (or the first one waiting) so its sleep is recomputed.
    if (dueAt <= now || this.pending.size === 1) this.signal();
  }

  private takeDue(): T[] {
    const now = this.now();
    const batch: T[] = [];
    const remember = this.options.rememberDelivered ?? 0;
    // Keys delivered longer than a window ago no longer hold anything back.
    for (const [key, at] of this.deliveredAt) {
      if (at + this.options.windowMs > now) break;
      this.deliveredAt.delete(key);
    }
    for (const [key, entry] of this.pending) {
      if (batch.length >= this.options.maxBatch) break;
      if (entry.dueAt > now) continue;
      this.pending.delete(key);
      batch.push(entry.value);
      if (this.options.windowMs > 0) {
        this.deliveredAt.delete(key);
        this.deliveredAt.set(key, now);
      }
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
