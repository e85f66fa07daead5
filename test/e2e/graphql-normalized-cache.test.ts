import { ApolloClient, HttpLink, InMemoryCache, type NormalizedCacheObject, split } from '@apollo/client/core/index.js';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions/index.js';
import { getMainDefinition } from '@apollo/client/utilities/index.js';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { liveChannel, TOPICS } from '../../services/kernel/jobs.js';
import { setupBookable } from '../support/booking-fixtures.js';
import { addParticipation, createAppointment, setupScheduling } from '../support/scheduling-fixtures.js';
import { reserve, slotOf } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { exampleOperation } from '../support/example-operations.js';
import { PROBE_START, wsUrlOf } from '../support/live.js';
import { eventually } from '../support/webhook-receiver.js';

/**
 * What a frontend developer gets from the schema: a listing held in Apollo
 * Client's normalized InMemoryCache is updated by `capacityChanged` events
 * alone (same `Bookable` type and `id`), with no merge code and no refetch.
 */
// The live calendar of examples/operations, as a frontend would copy it.
const LISTING = exampleOperation('live-calendar.graphql', 'LiveCalendarWeek');
const LIVE = exampleOperation('live-calendar.graphql', 'CapacityChanges');

/**
 * An Apollo Client as a frontend sets it up: queries and mutations over HTTP,
 * subscriptions over graphql-ws, one normalized InMemoryCache. `key` is a
 * CRM's (header and connectionParams); `requests()` counts HTTP requests.
 */
function apolloClient(baseUrl: string, key?: string) {
  let requests = 0;
  const countingFetch: typeof fetch = (input, init) => {
    requests++;
    return fetch(input, init);
  };
  const headers = key ? { 'X-SERVICE-CLIENT-ID': key } : undefined;
  const ws = createClient({ url: wsUrlOf(baseUrl), webSocketImpl: WebSocket, retryAttempts: 0, ...(headers ? { connectionParams: headers } : {}) });
  const link = split(
    ({ query }) => {
      const definition = getMainDefinition(query);
      return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
    },
    new GraphQLWsLink(ws),
    new HttpLink({ uri: `${baseUrl}/graphql`, fetch: countingFetch, ...(headers ? { headers } : {}) }),
  );
  const client = new ApolloClient({ link, cache: new InMemoryCache() });
  return {
    client,
    requests: () => requests,
    async close() {
      client.stop();
      await ws.dispose();
    },
  };
}

interface ListedBookable {
  id: string;
  start: string;
  capacityLeft: number;
  kind: string;
  appointmentUuid: string | null;
}

describe('GraphQL for normalized client caches (Apollo Client InMemoryCache over HTTP and graphql-ws)', () => {
  let app: TestApp;
  let apollo: ReturnType<typeof apolloClient>;
  let client: ApolloClient<NormalizedCacheObject>;

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
    apollo = apolloClient(app.baseUrl);
    client = apollo.client;
  }, 60_000);
  afterAll(async () => {
    await apollo?.close();
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
      await eventually(async () => {
        await app.redis.publish(liveChannel(app.config.queuePrefix, TOPICS.capacityChanged), probe);
        return seen.some((c) => c.bookable?.appointmentUuid === 'probe');
      }, 10_000);

      const requestsBefore = apollo.requests();
      const held = await reserve(app.anonymous, f);
      expect(held.status).toBe(200);
      const appointmentUuid = held.body.participation.appointment_uuid as string;
      const shownNow = () => watched.at(-1)?.find((b) => b.id === slot.id);
      await eventually(async () => shownNow()?.capacityLeft === 1, 10_000);
      // The Bookable became the slot's LotAppointment: same object, new kind and appointment.
      expect(shownNow()).toMatchObject({ capacityLeft: 1, appointmentUuid, kind: 'LOT_APPOINTMENT', start: slot.start });
      expect(seen.find((c) => c.bookable?.id === slot.id)).toBeDefined();

      const second = await reserve(app.anonymous, f, { timeslot_uuid: undefined, appointment_uuid: appointmentUuid });
      expect(second.status).toBe(200);
      await eventually(async () => shownNow()?.capacityLeft === 0, 10_000);
      // No query went over HTTP: the cache was updated from the subscription alone.
      expect(apollo.requests()).toBe(requestsBefore);
      expect(client.cache.extract()[`Bookable:${slot.id}`]).toMatchObject({ capacityLeft: 0, appointmentUuid });
    } finally {
      subscription.unsubscribe();
      watch.unsubscribe();
    }
  });
});

describe('a CRM dashboard in Apollo Client: appointmentChanged updates the cached appointments page', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
  }, 60_000);
  afterAll(async () => app?.close());

  it('participation and appointment states change in the cached page by id, from the subscription alone', async () => {
    const f = await setupScheduling(app);
    const appointment = await createAppointment(f, { capacity: 3 });
    const { reference: participationRef } = await addParticipation(f, appointment.reference, { state: 'REQUESTED', query: 'sendMails=false' });

    const apollo = apolloClient(app.baseUrl, f.key);
    const { client } = apollo;
    const PAGE = exampleOperation('crm-dashboard.graphql', 'ProviderAppointments');
    const CHANGES = exampleOperation('crm-dashboard.graphql', 'AppointmentChanges');
    type Page = { appointments: { nodes: { id: string; state: string; participations: { id: string; reference: string; state: string }[] }[] } };
    try {
      const variables = { providerReference: f.providerRef };
      const first = await client.query<Page>({ query: PAGE, variables });
      const row = first.data.appointments.nodes.find((a) => a.id === appointment.uuid)!;
      expect(row.participations).toEqual([expect.objectContaining({ reference: participationRef, state: 'REQUESTED' })]);

      const seen: { change: string; appointmentUuid: string; participation: { id: string; state: string } | null }[] = [];
      const subscription = client.subscribe({ query: CHANGES, variables }).subscribe({ next: (result) => seen.push(...(result.data?.appointmentChanged ?? [])) });
      const watched: Page[] = [];
      const watch = client.watchQuery<Page>({ query: PAGE, variables, fetchPolicy: 'cache-only' }).subscribe({ next: (result) => watched.push(result.data) });
      try {
        const probe = JSON.stringify({ change: 'PARTICIPATION_ADDED', crmId: f.crmId, providerId: f.providerUuid, appointmentUuid: 'probe', appointmentReference: 'probe',
          appointmentState: 'ACTIVE', participationUuid: null, participationReference: null, state: null, previousState: null, at: new Date().toISOString() });
        await eventually(async () => {
          await app.redis.publish(liveChannel(app.config.queuePrefix, TOPICS.appointmentChanged), probe);
          return seen.some((c) => c.appointmentUuid === 'probe');
        }, 10_000);
        const before = apollo.requests();
        const shown = () => watched.at(-1)?.appointments.nodes.find((a) => a.id === appointment.uuid);

        // The CRM confirms the request over REST: the dashboard's cached participation turns BOOKED.
        const confirmed = await f.api.post(`${f.base}/participations/${encodeURIComponent(participationRef)}?sendMails=false`, { state: 'BOOKED' });
        expect(confirmed.status).toBe(200);
        await eventually(async () => shown()?.participations[0]?.state === 'BOOKED', 10_000);
        expect(seen.find((c) => c.change === 'PARTICIPATION_STATE_CHANGED')?.participation).toEqual({ __typename: 'Participation', id: row.participations[0]!.id, state: 'BOOKED' });

        // Cancelling the appointment: its state and its participation's change in the cache too.
        const cancelled = await f.api.delete(`${f.base}/appointments`, { appointmentReference: appointment.reference });
        expect(cancelled.status).toBeLessThan(300);
        await eventually(async () => shown()?.state === 'CANCELLED' && shown()?.participations[0]?.state === 'CANCELED', 10_000);
        expect(apollo.requests()).toBe(before);
      } finally {
        subscription.unsubscribe();
        watch.unsubscribe();
      }
    } finally {
      await apollo.close();
    }
  });
});
