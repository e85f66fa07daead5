import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCrmByKey } from '../../services/crm/crm.service.js';
import { DEMO_DAYS, DEMO_PROVIDER_REFERENCE, seedDemoData } from '../../services/demo/demo-seed.service.js';
import { TEST_DATABASE_URL } from '../support/env.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { apiClient, unique } from '../support/http.js';
import { sql } from '../support/scheduling-fixtures.js';
import { createLogger } from '../../services/kernel/logger.js';

const enc = encodeURIComponent;

describe('demo data (npm run seed)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.close());

  const root = () => ({ em: app.orm.em, clock: app.clock, config: app.config, logger: createLogger('silent') });
  const counts = async (crmId: string) =>
    (
      await sql<Record<string, number>>(
        app,
        `select (select count(*)::int from app_user where crm_id = ?) users, (select count(*)::int from provider where crm_id = ?) providers,
                (select count(*)::int from product where crm_id = ?) products, (select count(*)::int from resource where crm_id = ?) resources,
                (select count(*)::int from timeslot where crm_id = ?) timeslots`,
        [crmId, crmId, crmId, crmId, crmId],
      )
    )[0]!;

  it('creates a provider, products, two resources with a week of bookable slots (one group slot); a second run adds nothing', async () => {
    const crmId = unique('demo');
    const first = await seedDemoData(root(), crmId);
    expect(first.crmCreated).toBe(true);
    expect(first.resources).toHaveLength(2);
    expect(first.timeslotsCreated).toBe(DEMO_DAYS * 3);
    const before = await counts(crmId);
    expect(before).toEqual({ users: 1, providers: 1, products: 3, resources: 2, timeslots: DEMO_DAYS * 3 });

    const api = apiClient(app.baseUrl, first.key);
    const resources = await api.get(`/crms/${crmId}/provider/${enc(DEMO_PROVIDER_REFERENCE)}/resources`);
    expect(resources.status).toBe(200);

    // The public listing shows the week, and the court has a slot with eight places.
    const [flat, court] = first.resources;
    const flatListing = await app.anonymous.get(`/resources/${flat!.uuid}/upcoming_bookables?groupFormat=yyyy-MM-dd`);
    expect(flatListing.status).toBe(200);
    expect(Object.keys(flatListing.body).filter((key) => key !== 'public_visible')).toHaveLength(DEMO_DAYS);
    const courtListing = await app.anonymous.get(`/resources/${court!.uuid}/upcoming_bookables?groupFormat=yyyy-MM-dd`);
    const courtSlots = Object.entries(courtListing.body).flatMap(([key, slots]) => (key === 'public_visible' ? [] : (slots as any[])));
    expect(courtSlots.filter((slot) => slot.capacity === 8)).toHaveLength(DEMO_DAYS);
    expect(courtSlots.filter((slot) => slot.capacity === 1)).toHaveLength(DEMO_DAYS * 4);
    // The booking page the command points to shows the demo flat.
    const page = await app.anonymous.get(`/book/${flat!.uuid}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Wohnung Musterstraße 1');

    const second = await seedDemoData(root(), crmId);
    expect(second.crmCreated).toBe(false);
    expect(second.timeslotsCreated).toBe(0);
    expect(second.resources).toEqual(first.resources);
    expect(await counts(crmId)).toEqual(before);
    // Keys are stored hashed, so a rerun hands out a new one and the old one stops working.
    expect((await findCrmByKey(app.orm.em.fork(), second.key))?.id).toBe(crmId);
    expect(await findCrmByKey(app.orm.em.fork(), first.key)).toBeNull();

    // A day later, only the new last day is added.
    app.clock.set(new Date(app.clock.now().getTime() + 86_400_000));
    try {
      const nextDay = await seedDemoData(root(), crmId);
      expect(nextDay.timeslotsCreated).toBe(3);
    } finally {
      app.clock.reset();
    }
  });

  it('the command prints the URLs to try and a working key as its last line, and can run again', async () => {
    const crmId = unique('demo');
    const run = () =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile('npx', ['tsx', 'scripts/seed.ts', '--crm', crmId], { env: { ...process.env, DATABASE_URL: TEST_DATABASE_URL, PUBLIC_BASE_URL: 'http://demo.test:4000' }, timeout: 60_000 }, (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) }),
        );
      });
    const first = await run();
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/http:\/\/demo\.test:4000\/resources\/[0-9a-f-]{36}\/upcoming_bookables/);
    expect(first.stdout).toContain('http://demo.test:4000/graphql');
    expect(first.stdout).toMatch(/http:\/\/demo\.test:4000\/book\/[0-9a-f-]{36}/);
    expect(first.stdout).toContain('http://demo.test:4000/docs');
    const key = first.stdout.trim().split('\n').at(-1)!;
    expect((await apiClient(app.baseUrl, key).get(`/crms/${crmId}/provider/${enc(DEMO_PROVIDER_REFERENCE)}/products`)).body).toHaveLength(3);
    const second = await run();
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('0 timeslot(s) added');
  });

  it('refuses a bad CRM id with a message and changes nothing', async () => {
    await expect(seedDemoData(root(), 'not a valid id!')).rejects.toThrow(/crmId must be/);
  });
});
