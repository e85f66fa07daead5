import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupBookable } from '../support/booking-fixtures.js';
import { addProduct, addResource, book, bookablesOf, participationsOf, providerPath, reserve, setChannel, upcoming, updateResource } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import type { ApiClient } from '../support/http.js';
import { CAPACITY_SUBSCRIPTION, type LiveSubscription, subscribe, untilLive } from '../support/live.js';
import { enc } from '../support/offerings-fixtures.js';

const UPCOMING = `query ($ref: String!, $channelKey: ChannelKey) {
  upcomingBookables(ref: $ref, channelKey: $channelKey) { publicVisible groups { bookables { productUuid } } }
}`;
const RESERVE = `mutation ($ref: String!, $input: ReserveAppointmentInput!, $channelKey: ChannelKey) {
  reserveAppointment(ref: $ref, input: $input, channelKey: $channelKey) { participation { state } }
}`;

/** Issue 11, item 10: a consumer's choice of `channelKey` never gets round the provider's rules. */
describe('booking channels: inheritance from RESOURCE_PUBLIC', () => {
  let app: TestApp;
  let pub: ApiClient;

  beforeAll(async () => {
    app = await startTestApp();
    pub = app.anonymous;
  });
  afterAll(async () => app?.close());

  const channels = async (f: Awaited<ReturnType<typeof setupBookable>>) => {
    const res = await f.api.get(`${providerPath(f)}/resources/${enc(f.resourceRef)}/channels`);
    expect(res.status).toBe(200);
    const list: { channelKey: string }[] = Array.isArray(res.body) ? res.body : res.body.channels;
    return Object.fromEntries(list.map(({ channelKey, ...rest }) => [channelKey, rest]));
  };

  it("channels without settings of their own take RESOURCE_PUBLIC's booking process and product filter (REST)", async () => {
    const f = await setupBookable(app, { capacity: 5 });
    const other = await addProduct(f, { name: 'Other' });
    await updateResource(f, f.resourceRef, { products: [f.productRef, other.ref] });
    await setChannel(f, 'RESOURCE_PUBLIC', { bookingProcess: 'REQUESTED', products: [f.productRef] });

    const listed = await channels(f);
    for (const key of ['CALENDAR_PUBLIC', 'RESOURCE_REFERENCE']) {
      expect(listed[key]).toMatchObject({ visible: true, bookingProcess: 'REQUESTED', products: [f.productRef] });
    }
    expect(listed.RESOURCE_EXCLUSIVE).toMatchObject({ visible: false });

    // The product RESOURCE_PUBLIC filters out is not offered on the other channels either.
    expect((await upcoming(pub, f.resourceUuid, `channelKey=CALENDAR_PUBLIC&prdRef=${other.uuid}`)).status).toBe(204);
    const offered = bookablesOf((await upcoming(pub, f.resourceUuid, 'channelKey=CALENDAR_PUBLIC')).body);
    expect(offered.length).toBeGreaterThan(0);
    expect(new Set(offered.flatMap((b: { products: { uuid: string }[] }) => b.products.map((p) => p.uuid)))).toEqual(new Set([f.productUuid]));
    expect((await reserve(pub, f, { product_uuid: other.uuid }, 'channelKey=CALENDAR_PUBLIC')).status).toBe(400);

    // A booking on CALENDAR_PUBLIC is a request, as on RESOURCE_PUBLIC.
    const booked = await book(pub, f, { channelKey: 'CALENDAR_PUBLIC' });
    expect(booked.status, booked.text).toBe(201);
    const rows = await participationsOf(app, booked.body.createdAppointment.appointment_uuid);
    expect(rows.map((r) => [r.state, r.channel_key])).toEqual([['REQUESTED', 'CALENDAR_PUBLIC']]);

    // A channel's first own settings start from what it inherited: only the fields sent change.
    const saved = await setChannel(f, 'RESOURCE_REFERENCE', { visible: true });
    expect(saved.body.channel).toMatchObject({ channelKey: 'RESOURCE_REFERENCE', visible: true, bookingProcess: 'REQUESTED', products: [f.productRef] });
    // A channel with settings of its own keeps them.
    await setChannel(f, 'CALENDAR_PUBLIC', { bookingProcess: 'IMMEDIATE', products: null });
    expect((await channels(f)).CALENDAR_PUBLIC).toMatchObject({ bookingProcess: 'IMMEDIATE', products: null });
    expect((await upcoming(pub, f.resourceUuid, `channelKey=CALENDAR_PUBLIC&prdRef=${other.uuid}`)).status).toBe(200);
  });

  it('a hidden RESOURCE_PUBLIC hides the channels without settings; RESOURCE_EXCLUSIVE is closed until configured (REST)', async () => {
    const f = await setupBookable(app);
    expect((await reserve(pub, f, {}, 'channelKey=RESOURCE_EXCLUSIVE')).status).toBe(400);
    expect((await upcoming(pub, f.resourceUuid, 'channelKey=RESOURCE_EXCLUSIVE')).status).toBe(204);

    await setChannel(f, 'RESOURCE_PUBLIC', { visible: false });
    for (const key of ['CALENDAR_PUBLIC', 'RESOURCE_REFERENCE']) {
      expect((await upcoming(pub, f.resourceUuid, `channelKey=${key}`)).status).toBe(204);
      const refused = await reserve(pub, f, {}, `channelKey=${key}`);
      expect(refused.status).toBe(400);
      expect(refused.body.errors[0].message).toBe('this resource cannot be booked on this channel');
      expect((await book(pub, f, { channelKey: key })).status).toBe(400);
    }

    // Configuring RESOURCE_EXCLUSIVE opens it (defaults plus the fields sent), whatever RESOURCE_PUBLIC says.
    const saved = await setChannel(f, 'RESOURCE_EXCLUSIVE', { bookingProcess: 'IMMEDIATE' });
    expect(saved.body.channel).toMatchObject({ visible: true, bookingProcess: 'IMMEDIATE', products: null });
    expect((await upcoming(pub, f.resourceUuid, 'channelKey=RESOURCE_EXCLUSIVE')).status).toBe(200);
  });

  it('GraphQL upcomingBookables and reserveAppointment apply the same inheritance', async () => {
    const f = await setupBookable(app);
    const exclusive = await pub.graphql(UPCOMING, { ref: f.resourceUuid, channelKey: 'RESOURCE_EXCLUSIVE' });
    expect(exclusive.body.data.upcomingBookables.groups).toEqual([]);
    expect((await pub.graphql(UPCOMING, { ref: f.resourceUuid, channelKey: 'CALENDAR_PUBLIC' })).body.data.upcomingBookables.groups).not.toEqual([]);

    await setChannel(f, 'RESOURCE_PUBLIC', { visible: false });
    const hidden = await pub.graphql(UPCOMING, { ref: f.resourceUuid, channelKey: 'CALENDAR_PUBLIC' });
    expect(hidden.body.data.upcomingBookables.groups).toEqual([]);
    const input = { timeslotUuid: f.timeslotUuid, productUuid: f.productUuid, from: f.slot.from, to: f.slot.to };
    const refused = await pub.graphql(RESERVE, { ref: f.resourceUuid, input, channelKey: 'CALENDAR_PUBLIC' });
    expect(refused.body.errors?.[0]?.extensions.code).toBe('VALIDATION_FAILED');

    await setChannel(f, 'RESOURCE_PUBLIC', { visible: true, bookingProcess: 'REQUESTED' });
    const held = await pub.graphql(RESERVE, { ref: f.resourceUuid, input, channelKey: 'CALENDAR_PUBLIC' });
    expect(held.body.errors).toBeUndefined();
    expect(held.body.data.reserveAppointment.participation.state).toBe('RESERVED');
  });
});

describe('booking channels: the live feed applies the same inheritance', () => {
  let app: TestApp;
  const subs: LiveSubscription[] = [];
  const open = (...args: Parameters<typeof subscribe>) => {
    const sub = subscribe(...args);
    subs.push(sub);
    return sub;
  };

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
  });
  afterAll(async () => {
    await Promise.all(subs.map((sub) => sub.close()));
    await app?.close();
  });

  it('capacityChanged on a channel without settings hears nothing of a resource whose RESOURCE_PUBLIC is hidden', async () => {
    const f = await setupBookable(app, { capacity: 2 });
    const second = await addResource(f);
    await setChannel(f, 'RESOURCE_PUBLIC', { visible: false });
    await setChannel(f, 'RESOURCE_EXCLUSIVE', { visible: true });
    // The second resource keeps RESOURCE_PUBLIC visible, so CALENDAR_PUBLIC is open there: its probes show when the subscription is live.
    const inherited = open(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [f.resourceUuid, second.uuid], channelKey: 'CALENDAR_PUBLIC' }, { field: 'capacityChanged' });
    const configured = open(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [f.resourceUuid], channelKey: 'RESOURCE_EXCLUSIVE' }, { field: 'capacityChanged' });
    await untilLive(inherited, app, second.uuid);
    await untilLive(configured, app, f.resourceUuid);
    const after = { inherited: inherited.received.length, configured: configured.received.length };
    expect((await reserve(app.anonymous, f, {}, 'channelKey=RESOURCE_EXCLUSIVE')).status).toBe(200);
    await configured.waitFor((item) => item.capacity_left === 1, { after: after.configured });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(inherited.received.slice(after.inherited)).toEqual([]);
    expect(inherited.errors).toEqual([]);
  });
});
