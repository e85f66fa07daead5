import { ApolloClient, HttpLink, InMemoryCache, type NormalizedCacheObject, split } from '@apollo/client/core/index.js';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions/index.js';
import { getMainDefinition } from '@apollo/client/utilities/index.js';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { liveChannel, TOPICS } from '../../services/kernel/jobs.js';
import { setupBookable } from '../support/booking-fixtures.js';
import { reserve, slotOf } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { exampleOperation } from '../support/example-operations.js';
import { PROBE_START, wsUrlOf } from '../support/live.js';

/**
 * What a frontend developer gets from the schema: a listing held in Apollo
 * Client's normalized InMemoryCache is updated by `capacityChanged` events
 * alone (same `Bookable` type and `id`), with no merge code and no refetch.
 */
// The live calendar of examples/operations, as a frontend would copy it.
const LISTING = exampleOperation('live-calendar.graphql', 'LiveCalendarWeek');
const LIVE = exampleOperation('live-calendar.graphql', 'CapacityChanges');

interface ListedBookable {
  id: string;
  start: string;
  capacityLeft: number;
  kind: string;
  appointmentUuid: string | null;
}

describe('GraphQL for normalized client caches (Apollo Client InMemoryCache over HTTP and graphql-ws)', () => {
  let app: TestApp;
  let client: ApolloClient<NormalizedCacheObject>;
  let wsClient: ReturnType<typeof createClient>;
  let httpRequests = 0;

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
    wsClient = createClient({ url: wsUrlOf(app.baseUrl), webSocketImpl: WebSocket, retryAttempts: 0 });
    const countingFetch: typeof fetch = (input, init) => {
      httpRequests++;
      return fetch(input, init);
    };
    const http = new HttpLink({ uri: `${app.baseUrl}/graphql`, fetch: countingFetch });
    const link = split(
      ({ query }) => {
        const definition = getMainDefinition(query);
        return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
      },
      new GraphQLWsLink(wsClient),
      http,
    );
    client = new ApolloClient({ link, cache: new InMemoryCache() });
  }, 60_000);
  afterAll(async () => {
    client?.stop();
    await wsClient?.dispose();
    await app?.close();
  });

  it('capacityChanged updates the Bookables of a cached upcomingBookables listing in place, by id', async () => {
    const f = await setupBookable(app, { capacity: 2, slots: 4 });
    const listed = (result: { data?: { upcomingBookables: { groups: { bookables: ListedBookable[] }[] } } }) =>
      result.data!.upcomingBookables.groups.flatMap((g) => g.bookables);
    const first = await client.query({ query: LISTING, variables: { ref: f.resourceUuid } });
    const slot = listed(first).find((b) => Date.parse(b.start) === Date.parse(slotOf(f, 0).from))!;
    expect(slot).toMatchObject({ capacityLeft: 2, appointmentUuid: null });
    expect(slot.id).toBe(`${f.resourceUuid}/${new Date(slotOf(f, 0).from).toISOString()}/${new Date(slotOf(f, 0).to).toISOString()}`);

    // The subscription writes its results into the same cache; the watched listing sees them.
    const seen: { bookable: { id: string; capacityLeft: number; appointmentUuid: string | null } | null }[] = [];
    const subscription = client.subscribe({ query: LIVE, variables: { refs: [f.resourceUuid] } }).subscribe({
      next: (result) => seen.push(...(result.data?.capacityChanged ?? [])),
    });
    const watched: ListedBookable[][] = [];
    const watch = client.watchQuery({ query: LISTING, variables: { ref: f.resourceUuid }, fetchPolicy: 'cache-only' }).subscribe({
      next: (result) => watched.push(listed(result as never)),
    });
    try {
      // Until the gateway listens on Redis, publish a synthetic event for a slot far away.
      const probe = JSON.stringify({ scope: 'slot', version: 0, resourceId: f.resourceUuid, timeslotId: null, appointmentId: 'probe', productId: null,
        kind: 'models.LotAppointment', start: PROBE_START, end: new Date(Date.parse(PROBE_START) + 1_800_000).toISOString(), capacity: 1, capacityLeft: 1 });
      await until(async () => {
        await app.redis.publish(liveChannel(app.config.queuePrefix, TOPICS.capacityChanged), probe);
        return seen.some((c) => c.bookable?.appointmentUuid === 'probe');
      });

      const requestsBefore = httpRequests;
      const held = await reserve(app.anonymous, f);
      expect(held.status).toBe(200);
      const appointmentUuid = held.body.participation.appointment_uuid as string;
      const shownNow = () => watched.at(-1)?.find((b) => b.id === slot.id);
      await until(async () => shownNow()?.capacityLeft === 1);
      // The Bookable became the slot's LotAppointment: same object, new kind and appointment.
      expect(shownNow()).toMatchObject({ capacityLeft: 1, appointmentUuid, kind: 'LOT_APPOINTMENT', start: slot.start });
      expect(seen.find((c) => c.bookable?.id === slot.id)).toBeDefined();

      const second = await reserve(app.anonymous, f, { timeslot_uuid: undefined, appointment_uuid: appointmentUuid });
      expect(second.status).toBe(200);
      await until(async () => shownNow()?.capacityLeft === 0);
      // No query went over HTTP: the cache was updated from the subscription alone.
      expect(httpRequests).toBe(requestsBefore);
      expect(client.cache.extract()[`Bookable:${slot.id}`]).toMatchObject({ capacityLeft: 0, appointmentUuid });
    } finally {
      subscription.unsubscribe();
      watch.unsubscribe();
    }
  });
});

async function until(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
