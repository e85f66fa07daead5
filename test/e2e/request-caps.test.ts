import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupBookable } from '../support/booking-fixtures.js';
import { consumerBody, sql } from '../support/booking-flow.js';
import { startTestApp, TEST_EPOCH, type TestApp } from '../support/harness.js';
import { enc } from '../support/offerings-fixtures.js';
import { loadConfig } from '../../services/kernel/config.js';
import { setupScheduling } from '../support/scheduling-fixtures.js';

/** Bounded work per request: every cap is a 400 that names it, and nothing is written. */
describe('caps on the work of one request', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ clockAt: TEST_EPOCH });
  });
  afterAll(async () => app?.close());

  const errorOf = (res: { body: { errors?: { message: string }[] } }) => res.body.errors?.[0]?.message;
  const refs = (name: string, n: number) => Array.from({ length: n }, (_, i) => `${name}=missing-${i}`).join('&');

  it('ref and tslRefs: at most 20 on every booking-flow route, REST and GraphQL; 20 are resolved fine', async () => {
    const f = await setupBookable(app);
    const reserve = { timeslot_uuid: f.timeslotUuid, product_uuid: f.productUuid, ...f.slot };
    const reservePath = `/rest/1/resources/${enc(f.resourceUuid)}/reserve_appointment`;
    const tooMany = await app.anonymous.post(`${reservePath}?${refs('ref', 21)}`, reserve);
    expect(tooMany.status).toBe(400);
    expect(errorOf(tooMany)).toBe('ref: at most 20 further resources per request, got 21');
    const booking = await app.anonymous.post(`/resources/${enc(f.resourceUuid)}/create_appointment_with_consumer?${refs('ref', 21)}`, consumerBody(f, { start: f.slot.from, end: f.slot.to }));
    expect(booking.status).toBe(400);
    expect(errorOf(booking)).toContain('ref: at most 20');
    const products = await app.anonymous.post(`/products/active_products?ref=${enc(f.resourceUuid)}&${refs('ref', 21)}`);
    expect(products.status).toBe(400);
    expect(errorOf(products)).toContain('ref: at most 20');
    const publicData = await app.anonymous.post(`/resources/public_data?ref=${enc(f.resourceUuid)}&${refs('tslRefs', 21)}`);
    expect(publicData.status).toBe(400);
    expect(errorOf(publicData)).toBe('tslRefs: at most 20 timeslots or appointments per request, got 21');
    const gql = await app.anonymous.graphql(`query ($t: [String!]) { activeProducts(refs: [], tslRefs: $t) { uuid } }`, { t: Array.from({ length: 21 }, (_, i) => `t${i}`) });
    expect(gql.body.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
    expect(gql.body.errors?.[0]?.message).toContain('tslRefs: at most 20');
    // Nothing was held by the refused reservation.
    expect(await sql(app, `select 1 from participation p join appointment a on a.id = p.appointment_id where a.resource_id = ?`, [f.resourceUuid])).toEqual([]);

    // 20 further refs and 20 tslRefs (unknown ones are skipped) still work, and the tslRefs name what they should.
    expect((await app.anonymous.post(`${reservePath}?${refs('ref', 20)}`, reserve)).status).toBe(200);
    const named = await app.anonymous.post(`/products/active_products?tslRefs=${f.timeslotUuid}&${refs('tslRefs', 19)}`);
    expect(named.status, named.text).toBe(200);
    expect(named.body.products.map((p: { uuid: string }) => p.uuid)).toEqual([f.productUuid]);
    const first = await app.anonymous.post(`/resources/public_data?tslRefs=missing&tslRefs=${f.timeslotUuid}`);
    expect(first.status).toBe(404);
  });

  it('series: a raster longer than the daily window over 0001–9999, a period over 3660 days or more than 2000 appointments are refused at once', async () => {
    const f = await setupScheduling(app);
    const series = (top: Record<string, unknown>, data: Record<string, unknown>) => ({
      capacity: 1,
      resourceReference: f.resourceRef,
      productReference: f.productRef,
      ...top,
      series_data: { raster: 60, weekdays: ['1', '2', '3', '4', '5', '6', '7'], ...data },
    });
    const timed = async (body: unknown) => {
      const started = performance.now();
      const res = await f.api.post(`${f.base}/appointments`, body);
      return { res, ms: performance.now() - started };
    };
    const rasterTooLong = await timed(series({ from: '2027-01-01T09:00', to: '2027-01-01T09:30' }, { from: '2027-01-01T00:00', to: '2036-12-01T00:00', raster: 120 }));
    expect(rasterTooLong.res.status).toBe(400);
    expect(errorOf(rasterTooLong.res)).toContain('series_data.raster: 120 minutes do not fit the daily window of 30 minutes');
    const forever = await timed(series({ from: '2027-01-01T09:00', to: '2027-01-01T09:30' }, { from: '0001-01-01T00:00', to: '9999-12-31T00:00', raster: 120 }));
    expect(forever.res.status).toBe(400);
    expect(errorOf(forever.res)).toMatch(/series_data|must be a date/);
    expect(forever.ms).toBeLessThan(2000);
    const tooLong = await timed(series({ from: '2027-01-01T09:00', to: '2027-01-01T10:00' }, { from: '2027-01-01T00:00', to: '2037-06-01T00:00', weekdays: ['1'] }));
    expect(tooLong.res.status).toBe(400);
    expect(errorOf(tooLong.res)).toMatch(/^series_data: a series may span at most 3660 days, got \d+$/);
    const tooBig = await timed(series({ from: '2027-01-01T08:00', to: '2027-01-01T20:00' }, { from: '2027-01-01T00:00', to: '2028-01-01T00:00', raster: 15 }));
    expect(tooBig.res.status).toBe(400);
    expect(errorOf(tooBig.res)).toMatch(/^a series may hold at most 2000 appointments/);
    const weekdays = await f.api.post(`${f.base}/appointments`, series({ from: '2027-01-01T09:00', to: '2027-01-01T10:00' }, { from: '2027-01-01T00:00', to: '2027-02-01T00:00', weekdays: Array(8).fill('1') }));
    expect(weekdays.status).toBe(400);
    expect(errorOf(weekdays)).toContain('series_data.weekdays');
    expect(await sql(app, `select 1 from appointment where crm_id = ?`, [f.crmId])).toEqual([]);
  });

  it('timeslots per create: at most 500 (a 400 naming timeslots)', async () => {
    const f = await setupScheduling(app);
    const day = (i: number) => new Date(Date.UTC(2027, 0, 1) + i * 86_400_000).toISOString().slice(0, 10);
    const timeslots = Array.from({ length: 501 }, (_, i) => ({
      resourceReference: f.resourceRef,
      start: `${day(i)}T09:00`,
      end: `${day(i)}T10:00`,
      raster: 30,
      defaultCapacity: 1,
      defaultAcceptBookings: true,
      state: 'BOOKABLE',
    }));
    const res = await f.api.post(`${f.base}/timeslots`, { timeslots });
    expect(res.status).toBe(400);
    expect(errorOf(res)).toContain('timeslots');
    expect(await sql(app, `select 1 from timeslot where crm_id = ?`, [f.crmId])).toEqual([]);
  });

  it('upcoming_bookables: the window is at most 366 days', async () => {
    const f = await setupBookable(app);
    const res = await app.anonymous.get(`/resources/${enc(f.resourceUuid)}/upcoming_bookables?from=2026-07-01T00:00&to=2027-07-03T00:00`);
    expect(res.status).toBe(400);
    expect(errorOf(res)).toMatch(/366 days/);
  });

  it('the gateway answers another request within 500 ms while the worst allowed request runs (a series of 2000 appointments)', async () => {
    const f = await setupScheduling(app);
    // 08:00–18:00 in 30 minutes = 20 a day, every day of 100 days: 2000 appointments, the most a series may hold.
    const startWorst = () => f.api.post(`${f.base}/appointments`, {
      capacity: 1,
      resourceReference: f.resourceRef,
      productReference: f.productRef,
      from: '2027-01-01T08:00',
      to: '2027-01-01T18:00',
      series_data: { from: '2027-01-01T00:00', to: '2027-04-11T00:00', raster: 30, weekdays: ['1', '2', '3', '4', '5', '6', '7'] },
    });
    // What the same request takes on this machine right now without the worst request (two shared cores under
    // parallel test files can be slow by themselves); the worst request may add at most 500 ms to it.
    const idle: number[] = [];
    for (let i = 0; i < 10; i++) {
      const started = performance.now();
      await app.anonymous.get('/resources/no-such-resource/upcoming_bookables');
      idle.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const latencies: number[] = [];
    let done = false;
    const worst = startWorst();
    void worst.finally(() => {
      done = true;
    });
    while (!done) {
      const started = performance.now();
      const other = await app.anonymous.get('/resources/no-such-resource/upcoming_bookables');
      latencies.push(performance.now() - started);
      expect(other.status).toBe(404);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const res = await worst;
    expect(res.status, res.text).toBe(201);
    expect(res.body.appointments).toHaveLength(2000);
    expect(latencies.length).toBeGreaterThan(0);
    expect(Math.max(...latencies)).toBeLessThan(500 + Math.max(...idle));
  });
});

describe('GraphQL document limits (graphql-armor)', () => {
  let app: TestApp;
  beforeAll(async () => {
    // A depth of 3 so that the schema's own types can exceed it (the default of 10 is deeper than any of them).
    app = await startTestApp({ config: { graphqlLimits: { ...loadConfig({}).graphqlLimits, maxDepth: 3 } } });
  });
  afterAll(async () => app?.close());

  const post = (query: string) => app.anonymous.request('POST', '/graphql', { query });

  it('refuses a document too deep, with too many aliases, directives or tokens: 400 with a clear code before anything runs', async () => {
    expect((await post('{ upcomingBookables(ref: "x") { groups { key } } }')).body.errors[0].extensions.code).toBe('NOT_FOUND');
    const tooDeep = await post('{ upcomingBookables(ref: "x") { groups { bookables { products { uuid } } } } }');
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(tooDeep.body.errors[0].message).toMatch(/depth/i);

    const aliases = Array.from({ length: 16 }, (_, i) => `r${i}: reserveAppointment(ref: "x", input: { productUuid: "p", from: "a", to: "b" }) { __typename }`).join(' ');
    const tooManyAliases = await post(`mutation { ${aliases} }`);
    expect(tooManyAliases.status).toBe(400);
    expect(tooManyAliases.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(tooManyAliases.body.errors[0].message).toMatch(/aliases/i);

    const tooManyDirectives = await post(`{ __typename ${'@include(if: true) '.repeat(25)} }`);
    expect(tooManyDirectives.status).toBe(400);
    expect(tooManyDirectives.body.errors[0].message).toMatch(/directives/i);

    const tooManyTokens = await post(`{ ${'__typename '.repeat(3100)} }`);
    expect(tooManyTokens.status, tooManyTokens.text).toBe(400);
    expect(tooManyTokens.body.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(tooManyTokens.body.errors[0].message).toMatch(/token/i);
  });

  it('gives no field suggestions and no stack traces', async () => {
    const res = await post('{ upcomingBookable(ref: "x") { publicVisible } }');
    expect(res.status).toBe(400);
    expect(res.text).not.toMatch(/Did you mean/i);
    // Nor enum values: a typo in a literal or a variable names none of them.
    const literal = await post('{ bookableKinds: upcomingBookables(ref: "x", channelKey: RESOURCE_PUBLI) { publicVisible } }');
    expect(literal.status).toBe(400);
    expect(literal.text).not.toMatch(/Did you mean|RESOURCE_PUBLIC"/);
    const failing = await post('{ upcomingBookables(ref: "no-such-resource") { publicVisible } }');
    expect(failing.body.errors[0].extensions.code).toBe('NOT_FOUND');
    expect(failing.text).not.toMatch(/stacktrace|\.ts:\d+|at async/);
  });

  it('batched requests are refused', async () => {
    const res = await app.anonymous.request('POST', '/graphql', [{ query: '{ __typename }' }, { query: '{ __typename }' }]);
    expect(res.status).toBe(400);
  });
});

describe('GraphQL in production', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ config: { production: true } });
  });
  afterAll(async () => app?.close());

  it('has introspection off', async () => {
    const res = await app.anonymous.request('POST', '/graphql', { query: '{ __schema { queryType { name } } }' });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(res.body.errors[0].message).toMatch(/introspection/i);
    expect((await app.anonymous.request('POST', '/graphql', { query: '{ __typename }' })).status).toBe(200);
  });
});
