import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RateLimits } from '../../services/kernel/config.js';
import { type BookingFixture, setupBookable } from '../support/booking-fixtures.js';
import { consumerBody, slotOf, sql } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { apiClient, type HttpResult } from '../support/http.js';
import { enc } from '../support/offerings-fixtures.js';

/** The limits of the product, switched on (the harness has them off), with the given values. */
function limits(values: Partial<RateLimits>): RateLimits {
  return {
    enabled: true,
    windowMs: 60_000,
    perIp: 1000,
    listing: 1000,
    reserve: 1000,
    booking: 1000,
    bookingsPerEmail: 1000,
    emailWindowMs: 3_600_000,
    holdsPerClient: 1000,
    ...values,
  };
}

const asClient = (ip: string) => ({ 'x-forwarded-for': ip });

function expectRateLimited(res: HttpResult): void {
  expect(res.status, res.text).toBe(429);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(res.body.errors[0].errorCode).toBe('RATE_LIMITED');
  expect(res.body.errors[0].message).toEqual(expect.any(String));
}

/** start/end of slot `index`, as create_appointment_with_consumer takes them. */
const slotTimes = (f: BookingFixture, index: number) => {
  const { from, to } = slotOf(f, index);
  return { start: from, end: to };
};
const reserveBody = (f: BookingFixture, index: number) => ({ timeslot_uuid: f.timeslotUuid, product_uuid: f.productUuid, ...slotOf(f, index) });
const reservePath = (f: BookingFixture) => `/rest/1/resources/${enc(f.resourceUuid)}/reserve_appointment`;
const bookPath = (f: BookingFixture) => `/resources/${enc(f.resourceUuid)}/create_appointment_with_consumer`;
const listingPath = (f: BookingFixture) => `/resources/${enc(f.resourceUuid)}/upcoming_bookables`;

const liveHoldsOf = (app: TestApp, f: BookingFixture) =>
  sql<{ client_ip: string | null; n: number }>(
    app,
    `select p.client_ip, count(*)::int as n from participation p join appointment a on a.id = p.appointment_id
      where a.resource_id = ? and p.state = 'RESERVED' group by p.client_ip order by p.client_ip`,
    [f.resourceUuid],
  );

describe('public flow limits behind one trusted proxy (TRUST_PROXY=1)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ config: { trustProxy: 1, rateLimits: limits({ holdsPerClient: 3, reserve: 12, listing: 5, bookingsPerEmail: 2 }) } });
  });
  afterAll(async () => app?.close());

  it('WebSocket: a message over the maximum size closes the connection with 1009 (WS_MAX_PAYLOAD_BYTES)', async () => {
    const socket = new WebSocket(`${app.baseUrl.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const code = new Promise<number>((resolve) => socket.once('close', (closeCode) => resolve(closeCode)));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { pad: 'x'.repeat(70_000) } }));
    expect(await code).toBe(1009);
  });

  it('hoarding: one client cannot hold more than 3 places of a resource, even in parallel; another client still books', async () => {
    const f = await setupBookable(app, { slots: 12, capacity: 1 });
    const hoarder = asClient('203.0.113.7');
    // Ten parallel reservations of ten slots: PostgreSQL lets exactly three through.
    const attempts = await Promise.all(Array.from({ length: 10 }, (_, i) => app.anonymous.post(reservePath(f), reserveBody(f, i), hoarder)));
    expect(attempts.filter((res) => res.status === 200)).toHaveLength(3);
    const refused = attempts.filter((res) => res.status !== 200);
    expect(refused).toHaveLength(7);
    for (const res of refused) expectRateLimited(res);
    expect(refused[0]!.body.errors[0].message).toContain('At most 3 live holds');
    expect(await liveHoldsOf(app, f)).toEqual([{ client_ip: '203.0.113.7', n: 3 }]);

    // Another client reserves and books a slot the hoarder could not take.
    const other = asClient('198.51.100.20');
    const held = await app.anonymous.post(reservePath(f), reserveBody(f, 11), other);
    expect(held.status, held.text).toBe(200);
    const booked = await app.anonymous.post(bookPath(f), consumerBody(f, { ...slotTimes(f, 10), email: 'second.client@example.com' }), other);
    expect(booked.status, booked.text).toBe(201);

    // Once the hoarder's holds ran out (settable clock), it may hold again — up to the cap.
    app.clock.advance(app.config.holdMs + 1000);
    try {
      const again = await app.anonymous.post(reservePath(f), reserveBody(f, 9), hoarder);
      expect(again.status, again.text).toBe(200);
    } finally {
      app.clock.reset();
    }
  });

  it('GraphQL: four reservations in one request against a cap of 3 answer the three holds made, and the fourth’s RATE_LIMITED (200)', async () => {
    const f = await setupBookable(app, { slots: 4, capacity: 1 });
    const client = asClient('203.0.113.40');
    const field = (alias: string, i: number) => {
      const { from, to } = slotOf(f, i);
      return `${alias}: reserveAppointment(ref: "${f.resourceUuid}", input: { timeslotUuid: "${f.timeslotUuid}", productUuid: "${f.productUuid}", from: "${from}", to: "${to}" }) { participation { customerUuid state } }`;
    };
    const res = await app.anonymous.request('POST', '/graphql', { query: `mutation { ${['a', 'b', 'c', 'd'].map(field).join(' ')} }` }, client);
    // Three holds were made: the answer must give the client their placeholder ids, so it is no 429 with data null.
    expect(res.status, res.text).toBe(200);
    for (const alias of ['a', 'b', 'c']) expect(res.body.data[alias].participation).toMatchObject({ customerUuid: expect.any(String), state: 'RESERVED' });
    expect(res.body.data.d).toBeNull();
    expect(res.body.errors).toMatchObject([{ path: ['d'], extensions: { code: 'RATE_LIMITED' } }]);
    expect(await liveHoldsOf(app, f)).toEqual([{ client_ip: '203.0.113.40', n: 3 }]);
    // Alone, the refused reservation is a 429 with Retry-After, as in REST.
    const alone = await app.anonymous.request('POST', '/graphql', { query: `mutation { ${field('e', 3)} }` }, client);
    expect(alone.status).toBe(429);
    expect(alone.body).toMatchObject({ data: { e: null }, errors: [{ extensions: { code: 'RATE_LIMITED' } }] });
    expect(Number(alone.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('re-reserving every few seconds is stopped by the reservation rate per client and resource', async () => {
    const f = await setupBookable(app, { slots: 14, capacity: 5 });
    const client = asClient('203.0.113.8');
    const statuses: number[] = [];
    let last: HttpResult | undefined;
    for (let i = 0; i < 14; i++) {
      last = await app.anonymous.post(reservePath(f), reserveBody(f, i), client);
      statuses.push(last.status);
      // Each hold is completed at once so the hold cap does not decide; the rate does.
      if (last.status === 200) {
        const done = await app.anonymous.post(bookPath(f), consumerBody(f, { ...slotTimes(f, i), placeholder_id: last.body.participation.customer_uuid, email: `rate${i}@example.com` }), asClient(`198.51.100.${i + 1}`));
        expect(done.status, done.text).toBe(201);
      }
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(12);
    expectRateLimited(last!);
    expect(last!.body.errors[0].message).toContain('Too many reservations');
    // Another resource is a budget of its own; another client too.
    const g = await setupBookable(app);
    expect((await app.anonymous.post(reservePath(g), reserveBody(g, 0), client)).status).toBe(200);
    expect((await app.anonymous.post(reservePath(f), reserveBody(f, 13), asClient('203.0.113.9'))).status).toBe(200);
  });

  it('listing: REST and GraphQL count alike, each alias counts, over the limit 429 with Retry-After', async () => {
    const f = await setupBookable(app);
    const client = asClient('203.0.113.10');
    expect((await app.anonymous.get(listingPath(f), client)).status).toBe(200);
    expect((await app.anonymous.get(listingPath(f), client)).status).toBe(200);
    // Three aliases of the same operation: the 3rd, 4th and 5th request.
    const aliased = `query ($r: String!) { a: upcomingBookables(ref: $r) { publicVisible } b: upcomingBookables(ref: $r) { publicVisible } c: upcomingBookables(ref: $r) { publicVisible } }`;
    const three = await app.anonymous.request('POST', '/graphql', { query: aliased, variables: { r: f.resourceUuid } }, client);
    expect(three.status, three.text).toBe(200);
    expect(three.body.errors).toBeUndefined();
    expectRateLimited(await app.anonymous.get(listingPath(f), client));
    // The GraphQL twin is refused the same way: 429, Retry-After, RATE_LIMITED in extensions.
    const refused = await app.anonymous.request('POST', '/graphql', { query: `query ($r: String!) { upcomingBookables(ref: $r) { publicVisible } }`, variables: { r: f.resourceUuid } }, client);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfter: expect.any(Number) });
    // A second client is not affected.
    expect((await app.anonymous.get(listingPath(f), asClient('203.0.113.11'))).status).toBe(200);
  });

  it('bookings per e-mail address: the third booking with one address within the hour is 429, from any IP, and writes nothing', async () => {
    const f = await setupBookable(app, { slots: 4, capacity: 5 });
    const email = 'Throw.Away@example.com';
    for (let i = 0; i < 2; i++) {
      const res = await app.anonymous.post(bookPath(f), consumerBody(f, { ...slotTimes(f, i), email: i === 0 ? email : email.toLowerCase() }), asClient(`198.51.100.${30 + i}`));
      expect(res.status, res.text).toBe(201);
    }
    const before = await sql<{ n: number }>(app, `select count(*)::int as n from participation p join appointment a on a.id = p.appointment_id where a.resource_id = ?`, [f.resourceUuid]);
    const third = await app.anonymous.post(bookPath(f), consumerBody(f, { ...slotTimes(f, 2), email }), asClient('198.51.100.40'));
    expectRateLimited(third);
    expect(third.body.errors[0].message).toContain('e-mail address');
    const after = await sql<{ n: number }>(app, `select count(*)::int as n from participation p join appointment a on a.id = p.appointment_id where a.resource_id = ?`, [f.resourceUuid]);
    expect(after).toEqual(before);
    // A bad request does not use up the address's budget.
    const other = 'careful@example.com';
    expect((await app.anonymous.post(bookPath(f), consumerBody(f, { ...slotTimes(f, 2), email: other, firstname: '' }), asClient('198.51.100.41'))).status).toBe(400);
    expect((await app.anonymous.post(bookPath(f), consumerBody(f, { ...slotTimes(f, 2), email: other }), asClient('198.51.100.41'))).status).toBe(201);
  });
});


describe('client IP with the default TRUST_PROXY=0', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ config: { rateLimits: limits({ listing: 3, holdsPerClient: 2 }), wsLimits: { maxPayloadBytes: 65_536, maxConnectionsPerIp: 2, maxConnections: 10_000 } } });
  });
  afterAll(async () => app?.close());

  it('a spoofed X-Forwarded-For changes nothing: the limits count the peer address', async () => {
    const f = await setupBookable(app, { slots: 4 });
    for (let i = 0; i < 3; i++) expect((await app.anonymous.get(listingPath(f), asClient(`10.0.0.${i + 1}`))).status).toBe(200);
    expectRateLimited(await app.anonymous.get(listingPath(f), asClient('10.0.0.99')));
    expectRateLimited(await app.anonymous.get(listingPath(f)));

    expect((await app.anonymous.post(reservePath(f), reserveBody(f, 0), asClient('10.1.1.1'))).status).toBe(200);
    expect((await app.anonymous.post(reservePath(f), reserveBody(f, 1), asClient('10.1.1.2'))).status).toBe(200);
    expectRateLimited(await app.anonymous.post(reservePath(f), reserveBody(f, 2), asClient('10.1.1.3')));
    expect(await liveHoldsOf(app, f)).toEqual([{ client_ip: '127.0.0.1', n: 2 }]);
  });

  it('WebSocket: open connections per IP are capped whatever X-Forwarded-For says; a closed one frees its place', async () => {
    const url = `${app.baseUrl.replace('http', 'ws')}/graphql`;
    const open = (ip: string) =>
      new Promise<{ socket: WebSocket; status: number }>((resolve) => {
        const socket = new WebSocket(url, 'graphql-transport-ws', { headers: { 'x-forwarded-for': ip } });
        socket.once('open', () => resolve({ socket, status: 101 }));
        socket.once('unexpected-response', (_req, res) => resolve({ socket, status: res.statusCode ?? 0 }));
        socket.once('error', () => undefined);
      });
    const first = await open('10.2.0.1');
    const second = await open('10.2.0.2');
    expect([first.status, second.status]).toEqual([101, 101]);
    const third = await open('10.2.0.3');
    expect(third.status).toBe(429);
    const closed = new Promise((resolve) => first.socket.once('close', resolve));
    first.socket.close();
    await closed;
    await expect.poll(async () => {
      const attempt = await open('10.2.0.4');
      if (attempt.status === 101) attempt.socket.close();
      return attempt.status;
    }).toBe(101);
    second.socket.close();
  });

});

describe('limits off (PUBLIC_RATE_LIMIT=off, as the harness and the benchmark run)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.close());

  it('lets one client list and hold freely and records no client IP on holds', async () => {
    expect(app.config.rateLimits.enabled).toBe(false);
    const f = await setupBookable(app, { slots: 6 });
    const client = apiClient(app.baseUrl);
    for (let i = 0; i < 70; i++) expect((await client.get(listingPath(f))).status).toBe(200);
    for (let i = 0; i < 6; i++) expect((await client.post(reservePath(f), reserveBody(f, i))).status).toBe(200);
    expect(await liveHoldsOf(app, f)).toEqual([{ client_ip: null, n: 6 }]);
  });
});
