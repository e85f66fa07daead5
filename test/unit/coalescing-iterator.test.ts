import { describe, expect, it } from 'vitest';
import { coalesce, type CoalesceOptions } from '../../schema/graphql/live/coalescing-iterator.js';
import type { LiveItem } from '../../services/live/capacity-feed.service.js';

interface Change {
  key: string;
  version: number;
  value: number;
}

/**
 * A push source like the PubSub's subscription: values pushed while nobody
 * reads are queued (unbounded here, so the test shows the coalescer drains
 * it), and `stopped()` tells whether the consumer called return().
 */
function source() {
  const queue: Change[] = [];
  let waiting: ((result: IteratorResult<Change>) => void) | undefined;
  let stopped = false;
  const iterator: AsyncIterableIterator<Change> = {
    [Symbol.asyncIterator]: () => iterator,
    next: () =>
      new Promise((resolve) => {
        if (stopped) return resolve({ done: true, value: undefined });
        const value = queue.shift();
        if (value) resolve({ done: false, value });
        else waiting = resolve;
      }),
    return: async () => {
      stopped = true;
      waiting?.({ done: true, value: undefined });
      return { done: true, value: undefined };
    },
  };
  return {
    repeater: iterator,
    push(value: Change) {
      if (waiting) {
        const resolve = waiting;
        waiting = undefined;
        resolve({ done: false, value });
      } else queue.push(value);
    },
    queued: () => queue.length,
    stopped: () => stopped,
  };
}

const asItems = (change: Change): LiveItem<Change>[] => [{ key: change.key, version: change.version, value: change }];
const options = (overrides: Partial<CoalesceOptions> = {}): CoalesceOptions => ({
  windowMs: 30,
  maxPending: 100,
  maxBatch: 500,
  rememberDelivered: 100,
  overflowError: () => new Error('too slow'),
  ...overrides,
});
const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

describe('coalesce', () => {
  it('delivers a change at once, then the last of the changes that follow within the window, once', async () => {
    const src = source();
    let clock = 1_000;
    const live = coalesce(src.repeater, asItems, options({ windowMs: 30, now: () => clock }));
    await tick();
    src.push({ key: 'slot', version: 1, value: 1 });
    // The clock has not moved: the first change of a slot does not wait for a window.
    expect((await live.next()).value).toEqual([{ key: 'slot', version: 1, value: 1 }]);
    for (let i = 2; i <= 50; i++) src.push({ key: 'slot', version: i, value: i });
    const second = live.next();
    await tick(60);
    // Real time passed, the coalescing clock did not: the window since the delivery is still open.
    expect(await Promise.race([second.then(() => 'delivered'), tick().then(() => 'waiting')])).toBe('waiting');
    clock += 30;
    expect((await second).value).toEqual([{ key: 'slot', version: 50, value: 50 }]);
    await live.return();
  });

  it('lets another slot through at once while one waits for its window', async () => {
    const src = source();
    let clock = 1_000;
    const live = coalesce(src.repeater, asItems, options({ windowMs: 30, now: () => clock }));
    await tick();
    src.push({ key: 'a', version: 1, value: 1 });
    expect((await live.next()).value!.map((c: Change) => c.value)).toEqual([1]);
    src.push({ key: 'a', version: 2, value: 2 });
    src.push({ key: 'b', version: 1, value: 3 });
    expect((await live.next()).value!.map((c: Change) => [c.key, c.value])).toEqual([['b', 3]]);
    clock += 30;
    expect((await live.next()).value!.map((c: Change) => [c.key, c.value])).toEqual([['a', 2]]);
    await live.return();
  });

  it('delivers the keys that are due together in one batch, oldest first', async () => {
    const src = source();
    const live = coalesce(src.repeater, asItems, options());
    await tick();
    src.push({ key: 'a', version: 1, value: 1 });
    src.push({ key: 'b', version: 1, value: 2 });
    src.push({ key: 'a', version: 2, value: 3 });
    await tick(50);
    expect((await live.next()).value!.map((c: Change) => [c.key, c.value])).toEqual([
      ['a', 3],
      ['b', 2],
    ]);
    await live.return();
  });

  it('drops a value older than the one waiting or already delivered for its key', async () => {
    const src = source();
    const live = coalesce(src.repeater, asItems, options({ windowMs: 0 }));
    await tick();
    src.push({ key: 'slot', version: 5, value: 5 });
    src.push({ key: 'slot', version: 3, value: 3 });
    expect((await live.next()).value!.map((c: Change) => c.value)).toEqual([5]);
    src.push({ key: 'slot', version: 4, value: 4 });
    src.push({ key: 'slot', version: 6, value: 6 });
    expect((await live.next()).value!.map((c: Change) => c.value)).toEqual([6]);
    await live.return();
  });

  it('keeps at most one value per key for a consumer that does not read, and nothing piles up upstream', async () => {
    const src = source();
    const live = coalesce(src.repeater, asItems, options({ windowMs: 0 }));
    await tick();
    // 20 000 changes on 100 slots while nobody reads: the source is drained at once, the coalescer keeps 100 values.
    for (let round = 1; round <= 200; round++) {
      for (let slot = 0; slot < 100; slot++) src.push({ key: `slot-${slot}`, version: round, value: round });
      await tick();
    }
    expect(live.pendingCount).toBe(100);
    expect(src.queued()).toBe(0);
    const batch = (await live.next()).value!;
    expect(batch).toHaveLength(100);
    expect(batch.every((c: Change) => c.value === 200)).toBe(true);
    await live.return();
  });

  it('fails a consumer that lets more keys wait than allowed, and stops the source', async () => {
    const src = source();
    const live = coalesce(src.repeater, asItems, options({ windowMs: 0, maxPending: 10 }));
    await tick();
    for (let slot = 0; slot < 11; slot++) src.push({ key: `slot-${slot}`, version: 1, value: slot });
    await tick();
    await expect(live.next()).rejects.toThrow('too slow');
    await tick();
    expect(src.stopped()).toBe(true);
    expect(await live.next()).toEqual({ done: true, value: undefined });
  });

  it('return() ends a waiting consumer and unsubscribes from the source', async () => {
    const src = source();
    const live = coalesce(src.repeater, asItems, options());
    const waiting = live.next();
    await tick();
    await live.return();
    expect(await waiting).toEqual({ done: true, value: undefined });
    await tick();
    expect(src.stopped()).toBe(true);
  });

  it('caps a batch at maxBatch values; the rest follow in the next one', async () => {
    const src = source();
    const live = coalesce(src.repeater, asItems, options({ windowMs: 0, maxBatch: 3 }));
    await tick();
    for (let slot = 0; slot < 5; slot++) src.push({ key: `slot-${slot}`, version: 1, value: slot });
    await tick();
    expect((await live.next()).value).toHaveLength(3);
    expect((await live.next()).value).toHaveLength(2);
    await live.return();
  });
});

/** A push source like the live hub's (an event target's listener): `emit` calls every listener at once. */
function pushSource() {
  const listeners = new Set<(change: Change) => void>();
  return {
    listen: (listener: (change: Change) => void) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    emit: (change: Change) => listeners.forEach((listener) => listener(change)),
    listening: () => listeners.size,
  };
}

describe('coalesce from a push source', () => {
  it('takes each value as it is handed over and coalesces it like an iterator’s', async () => {
    const src = pushSource();
    let clock = 1_000;
    const live = coalesce(src.listen, asItems, options({ windowMs: 30, now: () => clock }));
    expect(src.listening()).toBe(1);
    src.emit({ key: 'slot', version: 1, value: 1 });
    expect((await live.next()).value).toEqual([{ key: 'slot', version: 1, value: 1 }]);
    for (let i = 2; i <= 5; i++) src.emit({ key: 'slot', version: i, value: i });
    src.emit({ key: 'other', version: 1, value: 9 });
    expect((await live.next()).value!.map((c: Change) => [c.key, c.value])).toEqual([['other', 9]]);
    clock += 30;
    expect((await live.next()).value!.map((c: Change) => [c.key, c.value])).toEqual([['slot', 5]]);
    await live.return();
    expect(src.listening()).toBe(0);
  });

  it('stops listening when the consumer falls too far behind, and fails it', async () => {
    const src = pushSource();
    const live = coalesce(src.listen, asItems, options({ maxPending: 2, windowMs: 0 }));
    for (let i = 1; i <= 3; i++) src.emit({ key: `k${i}`, version: 1, value: i });
    expect(src.listening()).toBe(0);
    await expect(live.next()).rejects.toThrow('too slow');
    expect(await live.next()).toMatchObject({ done: true });
  });

  it('stops listening when a value cannot be read, and fails the consumer with that error', async () => {
    const src = pushSource();
    const live = coalesce(
      src.listen,
      (change: Change) => {
        if (change.value < 0) throw new Error('unreadable');
        return asItems(change);
      },
      options({ windowMs: 0 }),
    );
    src.emit({ key: 'a', version: 1, value: -1 });
    expect(src.listening()).toBe(0);
    await expect(live.next()).rejects.toThrow('unreadable');
  });
});
