import fc from 'fast-check';
import { getNamedType, isAbstractType, isObjectType, type GraphQLField } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../schema/rest/routes.js';
import { setupBookable, type BookingFixture } from '../support/booking-fixtures.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { isolatedDatabase } from '../support/isolated-database.js';
import { sql } from '../support/booking-flow.js';

/**
 * Property-based fuzzing (fast-check) of every REST route and every GraphQL
 * operation with malformed requests. Every value a body carries is wrong for
 * any field (a wrong type, a number out of every range, a string PostgreSQL
 * cannot store, an impossible date), so no request may succeed: the service
 * must answer each with a 4xx, never a 5xx, and change no row anywhere.
 */

/** Every body field name the API knows (REST snake_case and camelCase alike). */
const FIELDS = [
  'reference', 'email', 'username', 'firstName', 'lastName', 'firstname', 'lastname', 'language', 'locale', 'mobile', 'phone', 'name',
  'ownerReference', 'accountReference', 'branch', 'timeZone', 'description', 'minDuration', 'maxDuration', 'leadTimeMinutes',
  'followUpTimeMinutes', 'publicName', 'internalName', 'products', 'address', 'archived', 'contact', 'contactProfile', 'imageUrl',
  'timeslots', 'resourceReference', 'productReference', 'start', 'end', 'raster', 'defaultCapacity', 'defaultAcceptBookings', 'state',
  'capacity', 'acceptBookings', 'price', 'participations', 'series_data', 'from', 'to', 'weekdays', 'appointmentReference',
  'customerReference', 'note', 'message', 'messages', 'userName', 'timeslot_uuid', 'appointment_uuid', 'product_uuid', 'placeholder_id',
  'userReference', 'contactChannels', 'visible', 'bookingProcess', 'exclusiveProducts', 'acceptedCustomers', 'seriesId', 'channelKey',
];

/** Values wrong for every field: never a plain sane string, a valid number, a boolean or an empty list. */
const poison: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.constantFrom(-1, -2147483649, 2 ** 53 + 7, 1e300, -1e300, 0.5, -0.0001, 123456789012),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)),
    // Strings PostgreSQL cannot store (NUL), with odd unicode around it; impossible dates.
    fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => `${s}\u0000\u202e💥`),
    fc.constantFrom('2027-02-30T25:61', '0000-00-00T00:00', '9999-99-99', '2027-13-01T00:00\u0000', '-000001-01-01T00:00Z', '1e309', 'NaN'),
    fc.constant([null]),
    fc.array(tie('value'), { minLength: 1, maxLength: 3 }).map((items) => [null, ...items]),
    fc.dictionary(fc.constantFrom(...FIELDS, '$ne', '__proto__', 'constructor'), tie('value'), { minKeys: 0, maxKeys: 3 }).map((o) => ({ ...o, $poison: [null] })),
  ),
})).value;

/** A body: broken JSON, JSON that is not an object, or an object whose every known field is wrong, plus extra fields. */
const body: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('{', '{"a":', '[1,2', '{"reference": "x",}', 'nul', '"unterminated', '{"a":1}}', '\u0000', '{"a": NaN}', '{"a": 01}', '\ufeff{'),
  fc.string({ maxLength: 30 }).filter((s) => {
    try {
      JSON.parse(s);
      return false;
    } catch {
      return true;
    }
  }),
  fc.oneof(fc.constant(null), fc.integer(), fc.string(), fc.array(fc.anything({ maxDepth: 1 }), { maxLength: 3 })).map((v) => JSON.stringify(v)),
  fc
    .tuple(fc.array(poison, { minLength: FIELDS.length, maxLength: FIELDS.length }), fc.dictionary(fc.string({ maxLength: 8 }), poison, { maxKeys: 3 }))
    .map(([values, extra]) => JSON.stringify({ ...extra, ...Object.fromEntries(FIELDS.map((field, i) => [field, values[i]])) })),
);

const QUERY_NAMES = ['ref', 'tslRefs', 'from', 'to', 'groupFormat', 'timeFormat', 'languageTag', 'channelKey', 'prdRef', 'sendMails', 'ignoreCapacity', 'ignoreFutureAppointments', 'onDuplicateRaise', 'includeArchived', 'token', 'seriesId'];
const queryString: fc.Arbitrary<string> = fc
  .array(fc.tuple(fc.constantFrom(...QUERY_NAMES), fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('%00', 'maybe', '-1', '9'.repeat(40), 'QQQQ', "'", '2027-02-30', '[]', '%E0%A4%A'))), { maxLength: 4 })
  .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${/%/.test(v) ? v : encodeURIComponent(v)}`).join('&')}` : ''));

const weirdSegment = fc.oneof(fc.constantFrom('missing', '%00', '..', '%E0%A4%A', 'x'.repeat(700), '💥', '%20'), fc.string({ minLength: 1, maxLength: 12 }).map(encodeURIComponent));

/** Row contents of every table, to prove that nothing changed. */
async function snapshot(app: TestApp): Promise<Record<string, string>> {
  const tables = await sql<{ table_name: string }>(app, `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`);
  const result: Record<string, string> = {};
  for (const { table_name } of tables) {
    const [row] = await sql<{ digest: string; n: number }>(app, `select count(*)::int as n, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest from "${table_name}" t`);
    result[table_name] = `${row!.n}:${row!.digest}`;
  }
  return result;
}

describe('5,000+ malformed requests change nothing and never answer 5xx', () => {
  let app: TestApp;
  let f: BookingFixture;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  const failures: string[] = [];
  let sent = 0;

  beforeAll(async () => {
    // A database of its own, so that other suites' writes do not count as changes.
    db = await isolatedDatabase('fuzz');
    app = await startTestApp({ config: { databaseUrl: db.url } });
    f = await setupBookable(app);
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  /** A 5xx is a failure; so is a write that went through (a GET may answer: it reads, and junk query parameters it does not know are ignored). */
  const check = (what: string, status: number, text: string, reads = false) => {
    sent++;
    if (status >= 500 || (status < 400 && !reads)) failures.push(`${what} -> ${status} ${text.slice(0, 200)}`);
  };

  it('REST: every route, random path parameters, query strings and bodies', async () => {
    const before = await snapshot(app);
    const valid: Record<string, string> = {
      crmId: f.crmId,
      providerRef: f.providerRef,
      reference: f.providerRef,
      resourceRef: f.resourceRef,
      ref: f.resourceUuid,
      userRef: f.ownerRef,
      channelKey: 'RESOURCE_PUBLIC',
    };
    const request = fc.record({
      route: fc.integer({ min: 0, max: ROUTES.length - 1 }),
      useValid: fc.boolean(),
      segment: weirdSegment,
      query: queryString,
      body,
      key: fc.constantFrom('valid', 'valid', 'none', 'wrong'),
    });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const route = ROUTES[r.route]!;
        // A DELETE with every parameter right would be a proper request: deletes get a name that exists nowhere.
        const useValid = r.useValid && route.method !== 'delete';
        const path = route.path.replace(/:(\w+)/g, (_, name: string) => (useValid && valid[name] ? encodeURIComponent(valid[name]!) : r.segment));
        const client = r.key === 'valid' ? f.api : app.anonymous;
        const headers: Record<string, string> = { 'content-type': 'application/json', ...(r.key === 'wrong' ? { 'x-service-client-id': 'not-a-key' } : {}) };
        const res = await client.request(route.method.toUpperCase(), path + r.query, route.method === 'get' ? undefined : r.body, headers);
        // An unauthenticated client of a CRM route may be refused before anything, which is fine: still a 4xx.
        check(`${route.method.toUpperCase()} ${path}${r.query} ${r.body.slice(0, 120)}`, res.status, res.text, route.method === 'get');
      }),
      { numRuns: 4000 },
    );
    expect(failures).toEqual([]);
    expect(await snapshot(app)).toEqual(before);
  }, 600_000);

  it('GraphQL: every query and mutation with wrong arguments and variables', async () => {
    const before = await snapshot(app);
    const schema = app.gateway.schema;
    const operations: { kind: 'query' | 'mutation'; field: GraphQLField<unknown, unknown> }[] = [
      ...Object.values(schema.getQueryType()!.getFields()).map((field) => ({ kind: 'query' as const, field })),
      ...Object.values(schema.getMutationType()!.getFields()).map((field) => ({ kind: 'mutation' as const, field })),
    ];
    const literal: fc.Arbitrary<string> = fc.oneof(
      fc.constantFrom('null', '-1', '2147483648', '1.5', '-0.0001', '[null]', '{}', '{ bogus: 1 }', 'true', '"\\u0000💥"', '"2027-02-30T25:61"', '""', '["\\u0000"]', 'RESOURCE_NOPE'),
      fc.string({ maxLength: 10 }).map((s) => JSON.stringify(`${s}\u0000`)),
    );
    const request = fc.record({
      op: fc.integer({ min: 0, max: operations.length - 1 }),
      args: fc.array(literal, { minLength: 8, maxLength: 8 }),
      asVariables: fc.boolean(),
      variables: fc.array(poison, { minLength: 8, maxLength: 8 }),
      crm: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const { kind, field } = operations[r.op]!;
        const named = getNamedType(field.type);
        const selection = isObjectType(named) || isAbstractType(named) ? ' { __typename }' : '';
        let query: string;
        let variables: Record<string, unknown> | undefined;
        if (r.asVariables && field.args.length) {
          // Variables of the right declared type, with values of the wrong one (coercion refuses them), or null for required ones.
          const declared = field.args.map((arg, i) => `$v${i}: ${arg.type.toString()}`).join(', ');
          query = `${kind} (${declared}) { ${field.name}(${field.args.map((arg, i) => `${arg.name}: $v${i}`).join(', ')})${selection} }`;
          variables = Object.fromEntries(field.args.map((_, i) => [`v${i}`, r.variables[i]]));
        } else {
          const args = field.args.map((arg, i) => `${arg.name}: ${r.args[i] ?? 'null'}`).join(', ');
          query = `${kind} { ${field.name}${args ? `(${args})` : ''}${selection} }`;
        }
        const res = await (r.crm ? f.api : app.anonymous).graphql(query, variables);
        const errors = (res.body?.errors ?? []) as { extensions?: { code?: string } }[];
        const internal = errors.some((error) => error.extensions?.code === 'INTERNAL' || error.extensions?.code === 'INTERNAL_SERVER_ERROR');
        // GraphQL answers 200 with errors for a refused operation: what counts is no 5xx, no INTERNAL, no mutation
        // that goes through, and no data written. (A query without required arguments may answer; it reads only.)
        const refused = res.status >= 400 || errors.length > 0;
        check(`${query} ${JSON.stringify(variables)?.slice(0, 120)}`, res.status >= 500 || internal || (kind === 'mutation' && !refused) ? 500 : 400, res.text);
      }),
      { numRuns: 1500 },
    );
    expect(failures).toEqual([]);
    expect(await snapshot(app)).toEqual(before);
    expect(sent).toBeGreaterThanOrEqual(5000);
  }, 600_000);
});
