import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_EPOCH, type TestApp } from '../support/harness.js';
import { unique } from '../support/http.js';
import { createProduct, createResource } from '../support/offerings-fixtures.js';
import { createAppointment, reserveTimeslotSlot, setupScheduling, type SchedulingFixture, sql } from '../support/scheduling-fixtures.js';

const APPOINTMENTS = `query($p: String!, $first: Int, $after: String, $from: DateTime, $to: DateTime, $resource: String, $product: String, $archived: Boolean) {
  appointments(providerReference: $p, first: $first, after: $after, from: $from, to: $to, resourceRef: $resource, productRef: $product, includeArchived: $archived) {
    edges { cursor node { reference start participations { reference } } }
    nodes { reference }
    pageInfo { hasNextPage endCursor } } }`;
const TIMESLOTS = `query($p: String!, $r: String!, $first: Int, $after: String) {
  timeslots(providerReference: $p, resourceReference: $r, from: "2027-01-01T00:00", to: "2028-01-01T00:00", first: $first, after: $after) {
    edges { cursor node { reference start appointments { reference } } }
    pageInfo { hasNextPage endCursor } } }`;
const DELIVERIES = `query($id: String!, $first: Int, $after: String) {
  webhookDeliveries(webhookId: $id, first: $first, after: $after) { nodes { id eventId createdAt } pageInfo { hasNextPage endCursor } } }`;

const NOT_A_CURSOR = 'after: not a cursor of this list';
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('GraphQL cursor pagination', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ clockAt: TEST_EPOCH });
  });
  afterAll(async () => app?.close());

  async function gql(f: SchedulingFixture, query: string, variables: Record<string, unknown>) {
    const res = await f.api.graphql(query, variables);
    expect(res.status).toBe(200);
    const error = res.body.errors?.[0];
    return { data: res.body.data as any, error: error ? { message: error.message as string, code: error.extensions?.code as string } : undefined };
  }

  /** Every page of a list, following endCursor; checks each page's size and edges/nodes agreement. */
  async function allPages(f: SchedulingFixture, query: string, field: string, variables: Record<string, unknown>, first: number) {
    const pages: any[] = [];
    let after: string | null = null;
    for (let guard = 0; guard < 100; guard++) {
      const { data, error } = await gql(f, query, { ...variables, first, after });
      expect(error).toBeUndefined();
      const page = data[field];
      pages.push(page);
      if (page.edges) {
        expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)?.cursor ?? null);
        if (page.nodes) expect(page.nodes.map((n: any) => n.reference)).toEqual(page.edges.map((e: any) => e.node.reference));
      }
      if (!page.pageInfo.hasNextPage) return pages;
      expect((page.edges ?? page.nodes).length).toBe(first);
      after = page.pageInfo.endCursor;
    }
    throw new Error('more than 100 pages');
  }

  const references = (pages: any[]) => pages.flatMap((page) => page.edges.map((edge: any) => edge.node.reference as string));

  describe('appointments', () => {
    let f: SchedulingFixture;
    /** References in the order the REST listing (all at once) gives them. */
    let expected: string[];

    beforeAll(async () => {
      f = await setupScheduling(app);
      // 17 appointments over 12 starts: several share a start, created in an order unlike their references.
      const starts = [5, 1, 9, 1, 3, 12, 7, 1, 5, 11, 2, 8, 10, 4, 6, 5, 3];
      for (const [i, day] of starts.entries()) {
        const start = `2027-05-${String(day).padStart(2, '0')}T08:00:00Z`;
        await createAppointment(f, { reference: `appt-${String(97 - i).padStart(2, '0')}`, start, end: start.replace('T08', 'T09') });
      }
      const listed = await f.api.get(`${f.base}/appointments`);
      expect(listed.status).toBe(200);
      expected = listed.body.map((a: { reference: string }) => a.reference);
      expect(expected).toHaveLength(17);
    });

    it('pages through every appointment exactly once, in start order with ties by reference, as REST lists them', async () => {
      expect(expected).toEqual(['appt-90', 'appt-94', 'appt-96', 'appt-87', 'appt-81', 'appt-93', 'appt-84', 'appt-82', 'appt-89', 'appt-97', 'appt-83', 'appt-91', 'appt-86', 'appt-95', 'appt-85', 'appt-88', 'appt-92']);
      for (const first of [1, 4, 5, 17, 200]) {
        const pages = await allPages(f, APPOINTMENTS, 'appointments', { p: f.providerRef }, first);
        expect(references(pages)).toEqual(expected);
        expect(pages).toHaveLength(Math.max(1, Math.ceil(17 / first)));
        expect(pages.at(-1).pageInfo.hasNextPage).toBe(false);
      }
      // Ties: the three appointments of 1 May come by reference.
      const first = (await gql(f, APPOINTMENTS, { p: f.providerRef, first: 3 })).data.appointments;
      expect(first.edges.map((e: any) => e.node.start)).toEqual(['2027-05-01T08:00:00.000Z', '2027-05-01T08:00:00.000Z', '2027-05-01T08:00:00.000Z']);
      expect(first.nodes.map((n: any) => n.reference)).toEqual(['appt-90', 'appt-94', 'appt-96']);
      // The default page is 50.
      const all = (await gql(f, APPOINTMENTS, { p: f.providerRef })).data.appointments;
      expect(all.nodes.map((n: any) => n.reference)).toEqual(expected);
      expect(all.pageInfo.hasNextPage).toBe(false);
    });

    it('an appointment created between two fetches shows up on a later page when it starts later; nothing repeats', async () => {
      const g = await setupScheduling(app);
      const make = (reference: string, day: number) =>
        createAppointment(g, { reference, start: `2027-06-${String(day).padStart(2, '0')}T08:00:00Z`, end: `2027-06-${String(day).padStart(2, '0')}T09:00:00Z` });
      for (const day of [1, 2, 3, 4, 5, 6]) await make(`g-${day}`, day);
      const page1 = (await gql(g, APPOINTMENTS, { p: g.providerRef, first: 3 })).data.appointments;
      expect(page1.nodes.map((n: any) => n.reference)).toEqual(['g-1', 'g-2', 'g-3']);
      // Meanwhile: one later than the cursor, one before it (already passed), one at the cursor's very start but a later reference.
      await make('g-late', 20);
      await make('g-early', 1);
      await make('g-3b', 3);
      const seen = [...page1.nodes.map((n: any) => n.reference)];
      let after = page1.pageInfo.endCursor;
      for (;;) {
        const page = (await gql(g, APPOINTMENTS, { p: g.providerRef, first: 3, after })).data.appointments;
        seen.push(...page.nodes.map((n: any) => n.reference));
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect(seen).toEqual(['g-1', 'g-2', 'g-3', 'g-3b', 'g-4', 'g-5', 'g-6', 'g-late']);
      expect(new Set(seen).size).toBe(seen.length);
    });

    it('from/to: a window of starts [from, to); to must be after from', async () => {
      const window = async (from: string | null, to: string | null) =>
        references(await allPages(f, APPOINTMENTS, 'appointments', { p: f.providerRef, from, to }, 2));
      expect(await window('2027-05-03T08:00:00Z', '2027-05-06T08:00:00Z')).toEqual(['appt-81', 'appt-93', 'appt-84', 'appt-82', 'appt-89', 'appt-97']);
      expect(await window('2027-05-11T08:00:00Z', null)).toEqual(['appt-88', 'appt-92']);
      expect(await window(null, '2027-05-02T08:00:00Z')).toEqual(['appt-90', 'appt-94', 'appt-96']);
      // With an offset: 10:00+02:00 is 08:00Z, so 1 May's appointments start exactly at from.
      expect(await window('2027-05-01T10:00:00+02:00', '2027-05-01T08:00:00.001Z')).toEqual(['appt-90', 'appt-94', 'appt-96']);
      expect(await window('2028-01-01T00:00:00Z', null)).toEqual([]);
      for (const [from, to] of [
        ['2027-05-03T08:00:00Z', '2027-05-03T08:00:00Z'],
        ['2027-05-03T08:00:00Z', '2027-05-02T08:00:00Z'],
      ]) {
        expect((await gql(f, APPOINTMENTS, { p: f.providerRef, from, to })).error).toEqual({ code: 'VALIDATION_FAILED', message: 'to must be after from' });
      }
      // Not a date-time at all: refused by the DateTime scalar before the resolver runs.
      const bad = await f.api.graphql(APPOINTMENTS, { p: f.providerRef, from: 'tomorrow' });
      expect(bad.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    });

    it('a window and a cursor together: the cursor continues inside the window', async () => {
      const pages = await allPages(f, APPOINTMENTS, 'appointments', { p: f.providerRef, from: '2027-05-05T00:00:00Z', to: '2027-05-09T00:00:00Z' }, 2);
      expect(references(pages)).toEqual(['appt-82', 'appt-89', 'appt-97', 'appt-83', 'appt-91', 'appt-86']);
    });

    it('first must be 1..200', async () => {
      for (const first of [0, -1, 201, 10_000]) {
        expect((await gql(f, APPOINTMENTS, { p: f.providerRef, first })).error).toEqual({ code: 'VALIDATION_FAILED', message: 'first must be between 1 and 200' });
      }
      expect((await gql(f, APPOINTMENTS, { p: f.providerRef, first: 200 })).data.appointments.nodes).toHaveLength(17);
      expect((await gql(f, APPOINTMENTS, { p: f.providerRef, first: 1 })).data.appointments.pageInfo.hasNextPage).toBe(true);
    });

    it('refuses a malformed cursor, a cursor of another list and a tampered one (VALIDATION_FAILED)', async () => {
      const valid = (await gql(f, APPOINTMENTS, { p: f.providerRef, first: 2 })).data.appointments.pageInfo.endCursor as string;
      const [list, at, tie] = JSON.parse(Buffer.from(valid, 'base64url').toString('utf8'));
      expect(list).toBe('appointments');
      const slot = await createResource(f.api, f.crmId, f.providerRef, { products: [f.productRef] });
      await f.api.post(`${f.base}/timeslots`, {
        timeslots: [{ resourceReference: slot, start: '2027-05-01T08:00', end: '2027-05-01T10:00', raster: 30, defaultCapacity: 1, defaultAcceptBookings: true, state: 'BOOKABLE' }],
      });
      const timeslotCursor = (await gql(f, TIMESLOTS, { p: f.providerRef, r: slot, first: 1 })).data.timeslots.pageInfo.endCursor;
      expect(timeslotCursor).toEqual(expect.any(String));
      for (const after of [
        'garbage!',
        'bm90IGpzb24',
        encode({ at, tie }),
        encode([list, at]),
        encode([list, at, 7]),
        encode([list, 'tomorrow', tie]),
        encode([list, '2027-02-30T08:00:00.000000Z', tie]),
        encode([list, '2027-05-01T08:00:00Z', tie]),
        encode([list, at, '']),
        encode(['timeslots', at, tie]),
        timeslotCursor,
        `${valid}x`.repeat(200),
      ]) {
        expect((await gql(f, APPOINTMENTS, { p: f.providerRef, after })).error, after).toEqual({ code: 'VALIDATION_FAILED', message: NOT_A_CURSOR });
      }
      // An empty after is the first page, like none.
      expect((await gql(f, APPOINTMENTS, { p: f.providerRef, first: 2, after: '' })).data.appointments.nodes.map((n: any) => n.reference)).toEqual(expected.slice(0, 2));
      // A cursor is a position, not a row: one made up from a start and reference continues after it.
      const made = encode([list, '2027-05-11T08:00:00.000000Z', 'appt-00']);
      expect((await gql(f, APPOINTMENTS, { p: f.providerRef, after: made })).data.appointments.nodes.map((n: any) => n.reference)).toEqual(expected.slice(-2));
    });

    it('filters (resourceRef, productRef, includeArchived) combine with paging', async () => {
      const g = await setupScheduling(app);
      const otherResource = await createResource(g.api, g.crmId, g.providerRef, { products: [g.productRef] });
      const otherProduct = await createProduct(g.api, g.crmId, g.providerRef);
      const made: { reference: string; resource: string; product: string; archived: boolean }[] = [];
      for (let i = 0; i < 12; i++) {
        const resource = i % 3 === 0 ? otherResource : g.resourceRef;
        const product = i % 4 === 0 ? otherProduct : g.productRef;
        const archived = i % 5 === 0;
        const start = `2027-07-${String(i + 1).padStart(2, '0')}T08:00:00Z`;
        const reference = `f-${String(i).padStart(2, '0')}`;
        await createAppointment(g, { reference, start, end: start.replace('T08', 'T09'), resourceReference: resource, productReference: product, archived });
        made.push({ reference, resource, product, archived });
      }
      const pick = (keep: (m: (typeof made)[number]) => boolean) => made.filter(keep).map((m) => m.reference);
      const cases: [Record<string, unknown>, string[]][] = [
        [{}, pick((m) => !m.archived)],
        [{ archived: true }, pick(() => true)],
        [{ resource: otherResource }, pick((m) => m.resource === otherResource && !m.archived)],
        [{ resource: otherResource, archived: true }, pick((m) => m.resource === otherResource)],
        [{ product: otherProduct }, pick((m) => m.product === otherProduct && !m.archived)],
        [{ product: g.productRef, resource: g.resourceRef, archived: true }, pick((m) => m.product === g.productRef && m.resource === g.resourceRef)],
        [{ product: 'no-such-product' }, []],
      ];
      for (const [filter, want] of cases) {
        expect(references(await allPages(g, APPOINTMENTS, 'appointments', { p: g.providerRef, ...filter }, 2)), JSON.stringify(filter)).toEqual(want);
      }
      // The REST listing with the same filters gives the same appointments.
      const rest = await g.api.get(`${g.base}/appointments?resourceRef=${encodeURIComponent(otherResource)}&includeArchived=true`);
      expect(rest.body.map((a: { reference: string }) => a.reference)).toEqual(pick((m) => m.resource === otherResource));
    });

    it('loads the participations of the page’s appointments', async () => {
      const g = await setupScheduling(app);
      const refs: string[] = [];
      for (let i = 0; i < 4; i++) {
        const start = `2027-08-0${i + 1}T08:00:00Z`;
        const appointment = await createAppointment(g, {
          start,
          end: start.replace('T08', 'T09'),
          participations: [{ reference: `pp-${i}-${unique()}`, name: 'P', email: `p${i}@example.com`, state: 'BOOKED' }],
        });
        refs.push(appointment.participations[0].reference);
      }
      const pages = await allPages(g, APPOINTMENTS, 'appointments', { p: g.providerRef }, 3);
      expect(pages.flatMap((page) => page.edges.flatMap((e: any) => e.node.participations.map((p: any) => p.reference)))).toEqual(refs);
    });

    it('shows an appointment of a page as every other answer does (the cancellation, built from the entity)', async () => {
      const g = await setupScheduling(app);
      const FIELDS = `id uuid reference start end capacity acceptBookings resourceReference productReference productName contactReference
        address { ... on Address { city zip street number countryCode } ... on TextLocation { text } }
        price { value currency } archived description notes seriesId state
        participations { id reference appointmentReference customerReference state name email mobile note messages }`;
      const appointment = await createAppointment(g, {
        start: '2027-09-01T08:00',
        end: '2027-09-01T09:00',
        capacity: 3,
        productName: 'Sonderbesichtigung',
        price: { value: 12, currency: 'EUR' },
        notes: 'n',
        participations: [
          { reference: `pp-a-${unique()}`, name: 'Anna', email: 'anna@example.com', state: 'BOOKED' },
          { reference: `pp-b-${unique()}`, name: 'Bert', email: 'bert@example.com', mobile: '+49 170 2222222', note: 'VIP', state: 'REQUESTED' },
        ],
      });
      const page = async () =>
        (await gql(g, `query($p: String!) { appointments(providerReference: $p, first: 10) { nodes { ${FIELDS} } } }`, { p: g.providerRef })).data.appointments.nodes;
      const [listed] = await page();
      expect(listed.participations.map((p: { reference: string }) => p.reference)).toEqual(appointment.participations.map((p: { reference: string }) => p.reference));
      expect(listed).toMatchObject({ reference: appointment.reference, productName: 'Sonderbesichtigung', price: { value: 12, currency: 'EUR' } });
      const cancelled = await gql(
        g,
        `mutation($p: String!, $a: String!) { cancelAppointment(providerReference: $p, appointmentReference: $a) { ${FIELDS} } }`,
        { p: g.providerRef, a: appointment.reference },
      );
      expect(cancelled.error).toBeUndefined();
      expect(await page()).toEqual([cancelled.data.cancelAppointment]);
    });

    it("another CRM gets NOT_FOUND for this CRM's provider, with or without a cursor", async () => {
      const other = await setupScheduling(app);
      const cursor = (await gql(f, APPOINTMENTS, { p: f.providerRef, first: 2 })).data.appointments.pageInfo.endCursor;
      expect((await gql(other, APPOINTMENTS, { p: f.providerRef })).error?.code).toBe('NOT_FOUND');
      expect((await gql(other, APPOINTMENTS, { p: f.providerRef, after: cursor })).error?.code).toBe('NOT_FOUND');
      // Its own provider's list with this CRM's cursor is its own appointments after that position: none of this CRM's.
      await createAppointment(other, { reference: 'other-crm-late', start: '2027-12-01T08:00:00Z', end: '2027-12-01T09:00:00Z' });
      expect((await gql(other, APPOINTMENTS, { p: other.providerRef, after: cursor })).data.appointments.nodes).toEqual([{ reference: 'other-crm-late' }]);
    });
  });

  it('timeslots: pages by start with the appointments of each; first 1..200; foreign cursors refused', async () => {
    const f = await setupScheduling(app);
    const resource = await createResource(f.api, f.crmId, f.providerRef, { products: [f.productRef] });
    const days = [4, 1, 5, 3, 2];
    const created = await f.api.post(`${f.base}/timeslots`, {
      timeslots: days.map((day) => ({
        reference: `ts-${day}`,
        resourceReference: resource,
        start: `2027-09-0${day}T08:00`,
        end: `2027-09-0${day}T12:00`,
        raster: 60,
        defaultCapacity: 1,
        defaultAcceptBookings: true,
        state: 'BOOKABLE',
      })),
    });
    expect(created.status, created.text).toBe(201);
    const third = created.body.timeslots.find((t: { reference: string }) => t.reference === 'ts-3');
    const booked = await reserveTimeslotSlot(f, resource, third.uuid, '2027-09-03T06:00:00Z', '2027-09-03T07:00:00Z');
    const pages = await allPages(f, TIMESLOTS, 'timeslots', { p: f.providerRef, r: resource }, 2);
    expect(pages).toHaveLength(3);
    expect(references(pages)).toEqual(['ts-1', 'ts-2', 'ts-3', 'ts-4', 'ts-5']);
    expect(pages.flatMap((page) => page.edges.map((e: any) => e.node.appointments))).toEqual([[], [], [{ reference: booked.reference }], [], []]);
    // REST still lists them all at once.
    const rest = await f.api.get(`${f.base}/resource/${encodeURIComponent(resource)}/timeslots?from=2027-01-01T00:00&to=2028-01-01T00:00`);
    expect(rest.body.map((t: { reference: string }) => t.reference)).toEqual(['ts-1', 'ts-2', 'ts-3', 'ts-4', 'ts-5']);
    for (const first of [0, 201]) {
      expect((await gql(f, TIMESLOTS, { p: f.providerRef, r: resource, first })).error).toEqual({ code: 'VALIDATION_FAILED', message: 'first must be between 1 and 200' });
    }
    const appointmentCursor = encode(['appointments', '2027-09-01T06:00:00.000000Z', 'x']);
    for (const after of [appointmentCursor, encode(['timeslots', '2027-09-01T06:00:00.000000Z', 'not-a-uuid']), 'x']) {
      expect((await gql(f, TIMESLOTS, { p: f.providerRef, r: resource, after })).error).toEqual({ code: 'VALIDATION_FAILED', message: NOT_A_CURSOR });
    }
    const other = await setupScheduling(app);
    expect((await gql(other, TIMESLOTS, { p: f.providerRef, r: resource })).error?.code).toBe('NOT_FOUND');
  });

  it('webhookDeliveries: newest first by (created_at, id), exact to the microsecond; first 1..100, default 50', async () => {
    const f = await setupScheduling(app);
    const registered = await f.api.post(`/crms/${f.crmId}/webhooks`, { url: 'https://crm.example.com/hook', events: ['appointment.cancelled'] });
    expect(registered.status).toBe(201);
    const webhookId = registered.body.webhook.id as string;
    // 60 deliveries: stamps that differ below the millisecond, and groups that share one stamp (one fan-out's now()).
    const stamps = ['2027-01-01 10:00:00.123401+00', '2027-01-01 10:00:00.123402+00', '2027-01-01 10:00:00.123999+00', '2027-01-01 10:00:00.124+00', '2027-01-01 09:00:00+00'];
    for (let i = 0; i < 60; i++) {
      await sql(
        app,
        `insert into webhook_delivery (id, webhook_id, crm_id, event_id, event_type, body, status, attempts, attempt_log, created_at)
         values (gen_random_uuid(), ?, ?, ?, 'appointment.cancelled', '{}', 'SUCCEEDED', 1, '[]', ?::timestamptz)`,
        [webhookId, f.crmId, 1_000_000 + i, stamps[i % stamps.length]],
      );
    }
    const want = (
      await sql<{ id: string }>(app, `select id from webhook_delivery where webhook_id = ? order by created_at desc, id desc`, [webhookId])
    ).map((row) => row.id);
    for (const first of [1, 7, 12, 100]) {
      const pages = await allPages(f, DELIVERIES, 'webhookDeliveries', { id: webhookId }, first);
      expect(pages.flatMap((page) => page.nodes.map((n: any) => n.id))).toEqual(want);
    }
    const defaultPage = (await gql(f, DELIVERIES, { id: webhookId })).data.webhookDeliveries;
    expect(defaultPage.nodes).toHaveLength(50);
    expect(defaultPage.pageInfo.hasNextPage).toBe(true);
    for (const first of [0, 101]) {
      expect((await gql(f, DELIVERIES, { id: webhookId, first })).error).toEqual({ code: 'VALIDATION_FAILED', message: 'first must be between 1 and 100' });
    }
    expect((await gql(f, DELIVERIES, { id: webhookId, after: encode(['appointments', '2027-01-01T10:00:00.000000Z', 'x']) })).error?.message).toBe(NOT_A_CURSOR);
    // The REST listing stays the latest 100 at once.
    const rest = await f.api.get(`/crms/${f.crmId}/webhooks/${webhookId}/deliveries`);
    expect(rest.body.map((d: { id: string }) => d.id)).toEqual(want);
    const other = await setupScheduling(app);
    expect((await gql(other, DELIVERIES, { id: webhookId })).error?.code).toBe('NOT_FOUND');
  });
  describe('cost of a page', () => {
    // graphql-armor multiplies the cost of a selection by a literal `first`: a page is priced by its size.
    const dashboardPage = (first: number) => `query($p: String!) { appointments(providerReference: $p, first: ${first}) {
      nodes { id reference start end state capacity productName resourceReference participations { id reference name email state } }
      pageInfo { hasNextPage endCursor } } }`;

    it('admits the dashboard’s largest page (200 appointments with their participations)', async () => {
      const f = await setupScheduling(app);
      await createAppointment(f, { start: '2027-05-01T10:00', end: '2027-05-01T11:00' });
      const { data, error } = await gql(f, dashboardPage(200), { p: f.providerRef });
      expect(error).toBeUndefined();
      expect(data.appointments.nodes).toHaveLength(1);
    });

    it('refuses a document that asks for far more (400 GRAPHQL_VALIDATION_FAILED) before anything runs', async () => {
      const f = await setupScheduling(app);
      const page = 'appointments(providerReference: $p, first: 200) { nodes { id reference start end state capacity participations { id reference name email state } } }';
      const query = `query($p: String!) { ${Array.from({ length: 6 }, (_, i) => `a${i}: ${page}`).join(' ')} }`;
      const res = await f.api.graphql(query, { p: f.providerRef });
      expect(res.status).toBe(400);
      expect(res.body.errors?.[0]).toMatchObject({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
      expect(res.body.errors?.[0]?.message).toMatch(/Cost limit of 30000 exceeded/);
    });
  });
});
