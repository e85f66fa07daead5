import { createSourceEventStream, type ExecutionArgs, type ExecutionResult, execute, getOperationAST, Kind, print } from 'graphql';
import { interner } from '../../../services/kernel/interner.js';

type Result = ExecutionResult | Promise<ExecutionResult>;

/** Results one burst of deliveries may share at most; more starts afresh. */
const SHARED_RESULTS_MAX = 10_000;

/**
 * graphql-js executes a subscription's selection once per subscriber and
 * change. The subscriptions named in `shareable` (fields whose results hold
 * nothing of the caller: `capacityChanged` is public and its fields are the
 * batch it resolves) share it instead: subscribers that sent the same
 * document and variables and receive an equal batch get one result,
 * executed once per burst of deliveries (a macrotask), so a change sent to a
 * thousand live calendars is executed once per distinct query, not a
 * thousand times. Batches are told apart by batchKey (objects by
 * identity). Every other subscription runs as graphql-js runs it.
 */
export function subscribeSharingResults(shareable: ReadonlySet<string>) {
  const results = new Map<string, Result>();
  let clearing = false;
  const shared = (key: string, run: () => Result): Result => {
    let result = results.get(key);
    if (!result) {
      if (results.size >= SHARED_RESULTS_MAX) results.clear();
      result = run();
      results.set(key, result);
      if (!clearing) {
        clearing = true;
        setImmediate(() => {
          results.clear();
          clearing = false;
        });
      }
    }
    return result;
  };

  return async (args: ExecutionArgs): Promise<AsyncGenerator<ExecutionResult> | ExecutionResult> => {
    const stream = await createSourceEventStream(args);
    if (!isAsyncIterable(stream)) return stream;
    const run = (payload: unknown) => execute({ ...args, rootValue: payload });
    const documentKey = shareableDocument(args, shareable);
    return mapAsyncIterable(stream, documentKey === null ? run : (payload) => shared(`${documentKey}\u0000${batchKey(payload)}`, () => run(payload)));
  };
}

/** A number per object a batch held, for batchKey; weak, so it lives as long as the object. */
const objectIds = new WeakMap<object, number>();
let lastObjectId = 0;

/**
 * What decides a batch's result: its values in order, objects by identity
 * (the live feed hands every subscriber of a kind the same view objects, see
 * capacity-feed.service.ts), others by value. Unlike its JSON, it costs no
 * walk through the views: with thousands of subscribers a change was
 * serialized once per subscriber just to find the shared result. Equal
 * objects that are not the same object only miss sharing (executed apart).
 */
function batchKey(payload: unknown): string {
  if (!Array.isArray(payload)) return `=${JSON.stringify(payload)}`;
  let key = '';
  for (const value of payload) {
    if (typeof value === 'object' && value !== null) {
      let id = objectIds.get(value);
      if (id === undefined) objectIds.set(value, (id = ++lastObjectId));
      key += `#${id},`;
    } else {
      key += `${JSON.stringify(value)},`;
    }
  }
  return key;
}

/** Short names of the shareable documents with their variables, so a delivery's key is short (see kernel/interner.ts). */
const documentName = interner('d');

/** The key of a document whose one root field is shareable (with its variables), else null. */
function shareableDocument(args: ExecutionArgs, shareable: ReadonlySet<string>): string | null {
  const operation = getOperationAST(args.document, args.operationName);
  const roots = operation?.selectionSet.selections ?? [];
  if (roots.length !== 1 || roots[0]!.kind !== Kind.FIELD || !shareable.has(roots[0]!.name.value)) return null;
  return documentName(`${print(args.document)}\u0000${args.operationName ?? ''}\u0000${JSON.stringify(args.variableValues ?? {})}`);
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

/** `iterable` with `map` applied to each value; return() and throw() reach the source (an unsubscribe ends the feed). */
function mapAsyncIterable<T, U>(iterable: AsyncIterable<T>, map: (value: T) => U | Promise<U>): AsyncGenerator<U> {
  const iterator = iterable[Symbol.asyncIterator]();
  const close = async () => {
    if (typeof iterator.return === 'function') await iterator.return().catch(() => undefined);
  };
  const mapped: AsyncGenerator<U> = {
    async next() {
      const step = await iterator.next();
      if (step.done) return { value: undefined, done: true };
      try {
        return { value: await map(step.value), done: false };
      } catch (error) {
        await close();
        throw error;
      }
    },
    async return() {
      await close();
      return { value: undefined, done: true };
    },
    async throw(error: unknown) {
      if (typeof iterator.throw === 'function') await iterator.throw(error).catch(() => undefined);
      throw error;
    },
    [Symbol.asyncIterator]() {
      return mapped;
    },
  };
  return mapped;
}
