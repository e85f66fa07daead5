import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { setupBookable } from '../support/booking-fixtures.js';
import { addProduct, addResource, reserve } from '../support/booking-flow.js';
import { setupProvider } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { PROBE_START, wsUrlOf } from '../support/live.js';
import { eventually } from '../support/webhook-receiver.js';
import { liveChannel, TOPICS } from '../../services/kernel/jobs.js';

const BOOKABLE_FIELDS = `id start end formattedStart formattedEnd timeslotUuid appointmentUuid productUuid resourceUuid productName resourceName
  contactChannel { type value } capacity capacityLeft products { uuid name } kind`;

const LISTING = `query ($ref: String!, $timeFormat: String, $languageTag: String) {
  upcomingBookables(ref: $ref, timeFormat: $timeFormat, languageTag: $languageTag) { groups { bookables { ${BOOKABLE_FIELDS} } } }
}`;

const LIVE = `subscription ($refs: [String!]!, $timeFormat: String, $languageTag: String) {
  capacityChanged(refs: $refs, timeFormat: $timeFormat, languageTag: $languageTag) { scope resourceUuid from to bookable { ${BOOKABLE_FIELDS} } }
}`;

/**
 * The GraphQL shape of `capacityChanged`: a CapacityChange whose `bookable`
 * is the listing's own Bookable (type, id and every field), formatted by the
 * subscription's timeFormat/languageTag as the listing is by its own.
 */
describe('capacityChanged delivers the Bookable of upcomingBookables', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
  }, 60_000);
  afterAll(async () => app?.close());

  it('a change carries the same id and fields the listing shows for that slot, in camelCase and UTC', async () => {
    const f = await setupBookable(app, { capacity: 2, slots: 2 });
    const format = { timeFormat: 'EEEE d MMMM, HH:mm', languageTag: 'en' };
    const client = createClient({ url: wsUrlOf(app.baseUrl), webSocketImpl: WebSocket, retryAttempts: 0 });
    const changes: any[] = [];
    const errors: unknown[] = [];
    const stop = client.subscribe(
      { query: LIVE, variables: { refs: [f.resourceUuid], ...format } },
      { next: (result) => (result.errors ? errors.push(...result.errors) : changes.push(...((result.data as any)?.capacityChanged ?? []))), error: (e) => errors.push(e), complete: () => {} },
    );
    try {
      const probe = JSON.stringify({ scope: 'slot', version: 0, resourceId: f.resourceUuid, timeslotId: null, appointmentId: null, productId: null,
        kind: 'models.Bookable', start: PROBE_START, end: new Date(Date.parse(PROBE_START) + 1_800_000).toISOString(), capacity: 1, capacityLeft: 0 });
      await eventually(async () => {
        await app.redis.publish(liveChannel(app.config.queuePrefix, TOPICS.capacityChanged), probe);
        return changes.some((c) => Date.parse(c.from) === Date.parse(PROBE_START));
      }, 10_000, 'the subscription to be live');
      const after = changes.length;
      expect((await reserve(app.anonymous, f)).status).toBe(200);
      const isSlot = (c: any) => c.scope === 'SLOT' && Date.parse(c.from) === Date.parse(f.slot.from);
      const change = await eventually(async () => changes.slice(after).find(isSlot), 10_000, 'a change of the slot');
      expect(change).toMatchObject({ resourceUuid: f.resourceUuid, from: new Date(f.slot.from).toISOString(), to: new Date(f.slot.to).toISOString() });

      const listed = await app.anonymous.graphql(LISTING, { ref: f.resourceUuid, ...format });
      expect(listed.body.errors).toBeUndefined();
      const bookable = (listed.body.data as any).upcomingBookables.groups.flatMap((g: any) => g.bookables).find((b: any) => b.id === change.bookable.id);
      expect(bookable).toBeDefined();
      expect(change.bookable).toEqual(bookable);
      expect(change.bookable).toMatchObject({ kind: 'LOT_APPOINTMENT', capacity: 2, capacityLeft: 1, start: new Date(f.slot.from).toISOString() });
      expect(change.bookable.formattedStart).toMatch(/^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday) \d{1,2} [A-Z][a-z]+, 09:00$/);
      expect(errors).toEqual([]);
    } finally {
      stop();
      await client.dispose();
    }
  });

  it('formats each resource’s slots in its own provider’s zone when resources of several providers are watched together', async () => {
    const f = await setupBookable(app);
    const ny = { ...f, ...(await setupProvider(f.api, f.crmId, { timeZone: 'America/New_York' })) };
    const product = await addProduct(ny);
    const resource = await addResource({ ...ny, productRef: product.ref }, { publicName: 'New York agent' });
    const client = createClient({ url: wsUrlOf(app.baseUrl), webSocketImpl: WebSocket, retryAttempts: 0 });
    const changes: any[] = [];
    const errors: unknown[] = [];
    const stop = client.subscribe(
      { query: LIVE, variables: { refs: [f.resourceUuid, resource.uuid] } },
      { next: (result) => (result.errors ? errors.push(...result.errors) : changes.push(...((result.data as any)?.capacityChanged ?? []))), error: (e) => errors.push(e), complete: () => {} },
    );
    // 23:00Z on 1 June 2099: 19:00 in New York (EDT), 01:00 the next day in Berlin.
    const start = '2099-06-01T23:00:00.000Z';
    const probe = (resourceId: string) =>
      JSON.stringify({ scope: 'slot', version: 0, resourceId, timeslotId: null, appointmentId: null, productId: null, kind: 'models.Bookable', start, end: '2099-06-01T23:30:00.000Z', capacity: 1, capacityLeft: 1 });
    try {
      const seen = (resourceId: string) => changes.find((c) => c.resourceUuid === resourceId && c.from === start);
      const ofNewYork = await eventually(async () => {
        await app.redis.publish(liveChannel(app.config.queuePrefix, TOPICS.capacityChanged), probe(resource.uuid));
        return seen(resource.uuid);
      }, 10_000, 'the New York slot');
      expect(ofNewYork.bookable).toMatchObject({ formattedStart: '2099-06-01 19:00', formattedEnd: '2099-06-01 19:30', resourceName: 'New York agent' });
      await app.redis.publish(liveChannel(app.config.queuePrefix, TOPICS.capacityChanged), probe(f.resourceUuid));
      const ofBerlin = await eventually(async () => seen(f.resourceUuid), 10_000, 'the Berlin slot');
      expect(ofBerlin.bookable).toMatchObject({ formattedStart: '2099-06-02 01:00', formattedEnd: '2099-06-02 01:30' });
      expect(errors).toEqual([]);
    } finally {
      stop();
      await client.dispose();
    }
  });
});
