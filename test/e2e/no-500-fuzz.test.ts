import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../schema/rest/routes.js';
import { setupBookable } from '../support/booking-fixtures.js';
import { startTestApp, TEST_EPOCH, type TestApp } from '../support/harness.js';

/** Bodies of wrong shapes and types that a careless or hostile client sends. */
const JUNK_BODIES: unknown[] = [
  null,
  [],
  [1, 2],
  42,
  'text',
  {},
  { reference: 12, email: [], start: {}, end: 'yesterday', timeslots: 'x', state: 'NOPE', capacity: -1 },
  { reference: 'x'.repeat(5000), name: null, timeslot_uuid: 'not-a-uuid', product_uuid: '00000000-0000-0000-0000-000000000000' },
  { timeslots: [{ resourceReference: 'none', start: '2027-13-45T99:99', end: '2027-01-01T00:00', raster: 0.5, defaultCapacity: 1e12 }] },
  { series_data: { from: 'a', to: 'b', raster: 'c', weekdays: ['9'] } },
  { appointmentReference: { $ne: null }, seriesId: ['x'] },
  { email: 'a@b.c', firstname: '\u0000', lastname: 'x', start: '2027-01-01T00:00', end: '2027-01-01T00:30', timeslot_uuid: '00000000-0000-4000-8000-000000000000' },
];

const QUERIES = ['', '?ignoreCapacity=maybe&sendMails=7', '?from=x&to=y', '?ref=&ref=zzz&tslRefs=%00&groupFormat=QQQQ&timeFormat=\'&channelKey=NOPE&prdRef=x'];

describe('no request makes the gateway answer 500', () => {
  let app: TestApp;
  let fixture: Awaited<ReturnType<typeof setupBookable>>;
  beforeAll(async () => {
    app = await startTestApp({ clockAt: TEST_EPOCH });
    fixture = await setupBookable(app);
  });
  afterAll(async () => app?.close());

  it('answers junk bodies and query parameters on every documented route with a 2xx or 4xx', async () => {
    const params: Record<string, string> = {
      crmId: fixture.crmId,
      providerRef: fixture.providerRef,
      reference: fixture.providerRef,
      resourceRef: fixture.resourceRef,
      ref: fixture.resourceUuid,
      timeslotRef: 'missing',
      participationRef: 'missing',
      customerRef: 'missing',
      profileRef: 'missing',
      userRef: fixture.ownerRef,
      channelKey: 'RESOURCE_PUBLIC',
      token: 'AAAA',
    };
    const failures: string[] = [];
    for (const route of ROUTES) {
      const path = route.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? 'x'));
      for (const query of QUERIES) {
        for (const body of route.method === 'get' ? [undefined] : JUNK_BODIES) {
          const res = await fixture.api.request(route.method.toUpperCase(), path + query, body === undefined ? undefined : JSON.stringify(body), {
            'content-type': 'application/json',
          });
          if (res.status >= 500) failures.push(`${route.method.toUpperCase()} ${path}${query} ${JSON.stringify(body)?.slice(0, 80)} -> ${res.status} ${res.text.slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 180_000);
});
