import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { rotateCrmKey } from '../../services/crm/crm.service.js';
import { type BookingFixture, setupBookable } from '../support/booking-fixtures.js';
import { providerPath } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { apiClient, unique } from '../support/http.js';
import { CAPACITY_SUBSCRIPTION, type LiveSubscription, PROBE_START, subscribe, untilLive, wsUrlOf } from '../support/live.js';
import { addParticipation, createCustomer, type SchedulingFixture } from '../support/scheduling-fixtures.js';
import { liveChannel, TOPICS } from '../../services/kernel/jobs.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('live subscriptions: coalescing and limits', () => {
  let app: TestApp;
  let f: BookingFixture;

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
    f = await setupBookable(app, { capacity: 3 });
  });
  afterAll(async () => app?.close());

  describe('coalescing', () => {
    let sub: LiveSubscription;
    beforeAll(async () => {
      sub = subscribe(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [f.resourceUuid] }, { field: 'capacityChanged' });
      await untilLive(sub, app, f.resourceUuid);
    });
    afterAll(async () => sub?.close());

    /** A capacity event as the relay publishes it, for a synthetic slot of the fixture's resource. */
    const event = (start: string, version: number, capacityLeft: number) =>
      JSON.stringify({
        scope: 'slot',
        version,
        resourceId: f.resourceUuid,
        timeslotId: null,
        appointmentId: `burst-${start}`,
        productId: null,
        kind: 'models.LotAppointment',
        start,
        end: new Date(Date.parse(start) + 30 * 60_000).toISOString(),
        capacity: 100,
        capacityLeft,
      });

    it('a burst of 100 changes of one slot reaches the socket as one message with the last value', async () => {
      const start = '2098-01-01T10:00:00.000Z';
      const isIt = (item: any) => item.appointment_uuid === `burst-${start}`;
      const pipeline = app.redis.pipeline();
      for (let i = 1; i <= 100; i++) pipeline.publish(liveChannel(app.config.queuePrefix, TOPICS.capacityChanged), event(start, i, 100 - i));
      await pipeline.exec();
      const last = await sub.waitFor((item) => isIt(item) && item.capacity_left === 0);
      await sleep(300);
      const received = sub.received.filter((r) => isIt(r.item));
      expect(received.length).toBeLessThanOrEqual(2);
      expect(received.at(-1)).toBe(last);

      // A late event that is older than the delivered one is dropped; a newer one arrives.
      await app.redis.publish(liveChannel(app.config.queuePrefix, TOPICS.capacityChanged), event(start, 50, 50));
      await app.redis.publish(liveChannel(app.config.queuePrefix, TOPICS.capacityChanged), event(start, 101, 7));
      await sub.waitFor((item) => isIt(item) && item.capacity_left === 7);
      expect(sub.received.filter((r) => isIt(r.item)).map((r) => r.item.capacity_left)).not.toContain(50);
    });

    it('concurrent bookings of one appointment: the last value is the true capacity_left', async () => {
      const key = await rotateCrmKey(app.orm.em.fork(), f.crmId);
      const crm = { ...f, key, api: apiClient(app.baseUrl, key), base: providerPath(f) } as unknown as SchedulingFixture;
      f = { ...f, api: crm.api };
      const reference = `appointment-${unique()}@test`;
      const day = new Date(f.slot.from).toISOString().slice(0, 10);
      const created = await crm.api.post(`${providerPath(f)}/appointments`, {
        reference,
        start: `${day}T15:00`,
        end: `${day}T16:00`,
        resourceReference: f.resourceRef,
        productReference: f.productRef,
        capacity: 12,
        acceptBookings: true,
      });
      expect(created.status).toBe(201);
      const customers = await Promise.all(Array.from({ length: 10 }, () => createCustomer(crm)));
      const after = sub.received.length;
      const results = await Promise.all(customers.map((customerReference) => addParticipation(crm, reference, { customerReference, query: 'sendMails=false' })));
      expect(results.map((r) => r.res.status)).toEqual(Array(10).fill(201));
      const isIt = (item: any) => item.start.includes('T15:00') && item.kind === 'models.LotAppointment';
      await sub.waitFor((item) => isIt(item) && item.capacity_left === 2, { after });
      await sleep(300);
      const seen = sub.received.slice(after).filter((r) => isIt(r.item)).map((r) => r.item.capacity_left);
      expect(seen.at(-1)).toBe(2);
      expect(seen.length).toBeLessThanOrEqual(10);
    });
  });

  it('allows 20 subscriptions per connection; the 21st is refused with RATE_LIMITED until one ends', async () => {
    const client = createClient({ url: wsUrlOf(app.baseUrl), webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    const subs = Array.from({ length: 20 }, () => subscribe(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [f.resourceUuid] }, { field: 'capacityChanged', client }));
    try {
      // One probe reaches all 20 once they are all subscribed.
      await untilLive(subs[19]!, app, f.resourceUuid);
      for (const sub of subs) await untilLive(sub, app, f.resourceUuid);
      const extra = subscribe(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [f.resourceUuid] }, { field: 'capacityChanged', client });
      await extra.ended();
      expect(extra.errors[0]).toMatchObject({ message: expect.stringContaining('At most 20 subscriptions'), extensions: { code: 'RATE_LIMITED' } });
      // The connection and the other 20 are unharmed; after one ends, a new one is accepted.
      await subs.pop()!.close();
      const again = subscribe(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [f.resourceUuid] }, { field: 'capacityChanged', client });
      subs.push(again);
      await untilLive(again, app, f.resourceUuid, PROBE_START);
      expect(subs.every((sub) => sub.errors.length === 0 && !sub.completed)).toBe(true);
    } finally {
      await Promise.all(subs.map((sub) => sub.close()));
      await client.dispose();
    }
  });

  it('limits new WebSocket connections per client IP: over the limit the upgrade answers 429 with Retry-After', async () => {
    const limited = await startTestApp({ config: { wsConnectionRate: { max: 3, windowMs: 60_000 } } });
    const sockets: WebSocket[] = [];
    const connect = () =>
      new Promise<{ status: number; retryAfter?: string }>((resolve) => {
        const socket = new WebSocket(wsUrlOf(limited.baseUrl), 'graphql-transport-ws');
        sockets.push(socket);
        socket.once('open', () => resolve({ status: 101 }));
        socket.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }));
        socket.once('error', () => undefined);
      });
    try {
      expect([await connect(), await connect(), await connect()].map((r) => r.status)).toEqual([101, 101, 101]);
      const refused = await connect();
      expect(refused.status).toBe(429);
      expect(Number(refused.retryAfter)).toBeGreaterThan(0);
      // HTTP on the same gateway is not affected. (/livez, not /healthz: this is
      // about the WebSocket limit, not whether PostgreSQL answers within a second
      // on a machine busy with other test files.)
      expect((await limited.anonymous.get('/livez')).status).toBe(200);
    } finally {
      for (const socket of sockets) socket.terminate();
      await limited.close();
    }
  });
});
