import { GraphQLInt, GraphQLList, GraphQLObjectType, GraphQLSchema, GraphQLString, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { subscribeSharingResults } from '../../schema/graphql/live/shared-execution.js';

/** A schema whose subscription fields count how often their selection is executed. */
function countingSchema() {
  const executed = { capacityChanged: 0, other: 0 };
  const returned: string[] = [];
  const feeds: ((payload: unknown[]) => void)[] = [];
  // A source like the live hub's: values pushed by `publish`, return() ends it at once (even with a next() pending).
  const feed = (name: string) => (): AsyncIterableIterator<unknown[]> => {
    const queue: unknown[][] = [];
    const waiting: ((step: IteratorResult<unknown[]>) => void)[] = [];
    let done = false;
    feeds.push((payload) => {
      const waiter = waiting.shift();
      if (waiter) waiter({ value: payload, done: false });
      else queue.push(payload);
    });
    const iterator: AsyncIterableIterator<unknown[]> = {
      next: () => (queue.length ? Promise.resolve({ value: queue.shift()!, done: false }) : done ? Promise.resolve({ value: undefined, done: true }) : new Promise((resolve) => waiting.push(resolve))),
      return: () => {
        done = true;
        returned.push(name);
        for (const waiter of waiting.splice(0)) waiter({ value: undefined, done: true });
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  };
  // An item is a number, or an object carrying one (as the live feed's views are objects).
  const valueOf = (n: number | { n: number }) => (typeof n === 'number' ? n : n.n);
  const item = new GraphQLObjectType({
    name: 'Item',
    fields: {
      n: { type: GraphQLInt, resolve: valueOf },
      label: { type: GraphQLString, args: { prefix: { type: GraphQLString } }, resolve: (n: number | { n: number }, a) => `${a.prefix ?? ''}${valueOf(n)}` },
    },
  });
  const field = (name: 'capacityChanged' | 'other') => ({
    type: new GraphQLList(item),
    args: { prefix: { type: GraphQLString } },
    subscribe: feed(name),
    resolve: (batch: unknown[]) => {
      executed[name]++;
      return batch;
    },
  });
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLInt } } }),
    subscription: new GraphQLObjectType({ name: 'Subscription', fields: { capacityChanged: field('capacityChanged'), other: field('other') } }),
  });
  // Each subscriber gets its own array (as each live subscription batches for itself), with the same elements.
  return {
    schema,
    executed,
    returned,
    publish: (payload: unknown[]) => feeds.forEach((push) => push([...payload])),
    /** A batch made afresh for each subscriber. */
    publishEach: (make: () => unknown[]) => feeds.forEach((push) => push(make())),
  };
}

/** graphql-js answers objects without a prototype; compare their JSON. */
const plain = (value: unknown) => JSON.parse(JSON.stringify(value));

const subscribeWith = subscribeSharingResults(new Set(['capacityChanged']));

async function open(schema: GraphQLSchema, query: string, variableValues?: Record<string, unknown>) {
  const result = await subscribeWith({ schema, document: parse(query), variableValues });
  if (!(Symbol.asyncIterator in result)) throw new Error(JSON.stringify(result));
  return result;
}

describe('subscribeSharingResults', () => {
  const QUERY = 'subscription ($p: String) { capacityChanged(prefix: $p) { n label(prefix: $p) } }';

  it('executes a shareable subscription once for subscribers with the same query and an equal batch', async () => {
    const { schema, executed, publish } = countingSchema();
    const a = await open(schema, QUERY, { p: 'x' });
    const b = await open(schema, QUERY, { p: 'x' });
    const [first, second] = [a.next(), b.next()];
    publish([1, 2]);
    expect(plain((await first).value)).toEqual({ data: { capacityChanged: [{ n: 1, label: 'x1' }, { n: 2, label: 'x2' }] } });
    expect((await second).value).toBe((await first).value);
    expect(executed.capacityChanged).toBe(1);
  });

  it('executes again for other variables, another batch, or a later burst', async () => {
    const { schema, executed, publish } = countingSchema();
    const a = await open(schema, QUERY, { p: 'x' });
    const b = await open(schema, QUERY, { p: 'y' });
    let pending = [a.next(), b.next()];
    publish([1]);
    const [fromA, fromB] = await Promise.all(pending);
    expect(plain(fromA.value)).toEqual({ data: { capacityChanged: [{ n: 1, label: 'x1' }] } });
    expect(plain(fromB.value)).toEqual({ data: { capacityChanged: [{ n: 1, label: 'y1' }] } });
    expect(executed.capacityChanged).toBe(2);
    await new Promise((resolve) => setImmediate(resolve));
    pending = [a.next(), b.next()];
    publish([1]);
    await Promise.all(pending);
    expect(executed.capacityChanged).toBe(4);
  });

  it('tells batches of objects apart by identity: the same views share, equal copies are executed apart', async () => {
    const { schema, executed, publish, publishEach } = countingSchema();
    const a = await open(schema, QUERY, { p: 'x' });
    const b = await open(schema, QUERY, { p: 'x' });
    const views = [{ n: 1 }, { n: 2 }];
    let pending = [a.next(), b.next()];
    publish(views);
    const [first, second] = await Promise.all(pending);
    expect(second.value).toBe(first.value);
    expect(plain(first.value)).toEqual({ data: { capacityChanged: [{ n: 1, label: 'x1' }, { n: 2, label: 'x2' }] } });
    expect(executed.capacityChanged).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    pending = [a.next(), b.next()];
    // Equal but not the same objects: the right answers, executed once per subscriber.
    publishEach(() => [{ n: 3 }]);
    const answers = await Promise.all(pending);
    expect(answers.map((answer) => plain(answer.value))).toEqual([0, 1].map(() => ({ data: { capacityChanged: [{ n: 3, label: 'x3' }] } })));
    expect(executed.capacityChanged).toBe(3);
  });

  it('runs other subscriptions once per subscriber', async () => {
    const { schema, executed, publish } = countingSchema();
    const a = await open(schema, 'subscription { other { n } }');
    const b = await open(schema, 'subscription { other { n } }');
    const pending = [a.next(), b.next()];
    publish([7]);
    await Promise.all(pending);
    expect(executed.other).toBe(2);
  });

  it('ends the source when the subscriber leaves, and answers request errors as results', async () => {
    const { schema, returned } = countingSchema();
    const a = await open(schema, QUERY);
    const pending = a.next();
    await a.return(undefined);
    expect(await pending).toMatchObject({ done: true });
    expect(returned).toEqual(['capacityChanged']);
    const refused = await subscribeWith({ schema, document: parse('subscription ($p: String) { capacityChanged(prefix: $p) { n } }'), variableValues: { p: 5 } });
    expect(refused).toMatchObject({ errors: [expect.objectContaining({ message: expect.stringContaining('$p') })] });
  });
});
