import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setupBookable } from '../support/booking-fixtures.js';
import { addProduct, addResource, addTimeslot, book, bookablesOf, reserve, slotOf, sql, upcoming } from '../support/booking-flow.js';
import { enc } from '../support/offerings-fixtures.js';
import { startTestApp, TEST_EPOCH, type TestApp } from '../support/harness.js';
import { leftShown, listedAt } from '../support/live.js';
import { createAppointment, setupScheduling } from '../support/scheduling-fixtures.js';
import { type ApiClient, unique } from '../support/http.js';

const RESERVE = `mutation ($ref: String!, $input: ReserveAppointmentInput!) {
  reserveAppointment(ref: $ref, input: $input) { participation { uuid from to state } }
}`;

const UPCOMING = `query ($ref: String!, $refs: [String!]) {
  upcomingBookables(ref: $ref, refs: $refs) { groups { bookables { resourceUuid } } }
}`;
const ACTIVE_PRODUCTS = `query ($refs: [String!], $tslRefs: [String!]) { activeProducts(refs: $refs, tslRefs: $tslRefs) { uuid } }`;
const PUBLIC_DATA = `query ($refs: [String!], $tslRefs: [String!]) { publicData(refs: $refs, tslRefs: $tslRefs) { resource { uuid } } }`;
const CREATE = `mutation ($ref: String!, $input: ConsumerBookingInput!) { createAppointmentWithConsumer(ref: $ref, input: $input) { appointmentUuid } }`;
const GONE = ['gone@test', '00000000-0000-4000-8000-000000000000'];

/** `2026-05-04T07:00:00.000Z` → `2026-05-04T07:00:00` (the same wall time without offset). */
const withoutOffset = (iso: string): string => iso.slice(0, 19);

describe('booking flow: inputs as people and CRMs write them', () => {
  let app: TestApp;
  let pub: ApiClient;

  beforeAll(async () => {
    app = await startTestApp({ clockAt: TEST_EPOCH });
    pub = app.anonymous;
  });
  afterEach(() => app.clock.reset());
  afterAll(async () => app?.close());

  describe('reserve_appointment from/to', () => {
    it('reads from/to without offset as UTC (REST)', async () => {
      const f = await setupBookable(app);
      const res = await reserve(pub, f, { from: withoutOffset(f.slot.from), to: withoutOffset(f.slot.to) });
      expect(res.status).toBe(200);
      expect(new Date(res.body.participation.from).toISOString()).toBe(f.slot.from);
      expect(new Date(res.body.participation.to).toISOString()).toBe(f.slot.to);
    });

    it('takes from/to with an offset as given (REST)', async () => {
      const f = await setupBookable(app);
      const shift = (iso: string) => new Date(new Date(iso).getTime() + 2 * 3_600_000).toISOString().slice(0, 19) + '+02:00';
      const res = await reserve(pub, f, { from: shift(f.slot.from), to: shift(f.slot.to) });
      expect(res.status).toBe(200);
      expect(new Date(res.body.participation.from).toISOString()).toBe(f.slot.from);
    });

    it('GraphQL takes from/to as DateTime: with an offset; without one it answers 400 and holds nothing', async () => {
      const f = await setupBookable(app);
      const input = { timeslotUuid: f.timeslotUuid, productUuid: f.productUuid, from: withoutOffset(f.slot.from), to: withoutOffset(f.slot.to) };
      const refused = await pub.graphql(RESERVE, { ref: f.resourceUuid, input });
      expect(refused.status).toBe(400);
      expect(refused.body.errors?.[0]?.message).toMatch(/DateTime/);
      expect(leftShown(await listedAt(pub, f.resourceUuid, f.slot.from))).toBe(3);
      const res = await pub.graphql(RESERVE, { ref: f.resourceUuid, input: { ...input, from: f.slot.from, to: f.slot.to } });
      expect(res.body.errors).toBeUndefined();
      expect(new Date(res.body.data.reserveAppointment.participation.from).toISOString()).toBe(f.slot.from);
    });
  });

  describe('unknown extra refs', () => {
    it('upcoming_bookables skips unknown extra refs and a deleted extra resource; the path resource must exist (REST)', async () => {
      const f = await setupBookable(app, { slots: 1 });
      const second = await addResource(f);
      await addTimeslot(f, { resourceReference: second.ref, start: f.slot.from, end: f.slot.to });
      await f.api.delete(`/crms/${f.crmId}/provider/${enc(f.providerRef)}/resources/${enc(second.ref)}`);
      const query = [...GONE, second.ref, second.uuid].map((ref) => `ref=${enc(ref)}`).join('&');
      const res = await upcoming(pub, f.resourceUuid, query);
      expect(res.status).toBe(200);
      expect(bookablesOf(res.body).map((b) => b.resource_uuid)).toEqual([f.resourceUuid]);
      expect((await upcoming(pub, 'gone@test', `ref=${enc(f.resourceUuid)}`)).status).toBe(404);
    });

    it('upcomingBookables skips unknown extra refs (GraphQL)', async () => {
      const f = await setupBookable(app, { slots: 1 });
      const res = await pub.graphql(UPCOMING, { ref: f.resourceUuid, refs: GONE });
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.upcomingBookables.groups.flatMap((g: { bookables: unknown[] }) => g.bookables)).toEqual([{ resourceUuid: f.resourceUuid }]);
      expect((await pub.graphql(UPCOMING, { ref: 'gone@test', refs: [f.resourceUuid] })).body.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    });

    it('reserve_appointment and create_appointment_with_consumer skip unknown extra refs', async () => {
      const f = await setupBookable(app);
      const query = GONE.map((ref) => `ref=${enc(ref)}`).join('&');
      expect((await reserve(pub, f, {}, query)).status).toBe(200);
      expect((await book(pub, f, {}, query)).status).toBe(201);
    });

    it('active_products and public_data skip unknown extra ref and tslRefs entries; the first must exist (REST)', async () => {
      const f = await setupBookable(app);
      const refs = [f.resourceRef, ...GONE].map((ref) => `ref=${enc(ref)}`).join('&');
      const tsl = GONE.map((ref) => `tslRefs=${enc(ref)}`).join('&');
      const products = await pub.post(`/products/active_products?${refs}&${tsl}`);
      expect(products.status).toBe(200);
      expect(products.body.products.map((p: { uuid: string }) => p.uuid)).toEqual([f.productUuid]);
      const byTimeslot = await pub.post(`/products/active_products?tslRefs=${f.timeslotUuid}&${tsl}`);
      expect(byTimeslot.status).toBe(200);
      const data = await pub.post(`/resources/public_data?${refs}&${tsl}`);
      expect(data.status).toBe(200);
      expect(data.body.resource.uuid).toBe(f.resourceUuid);
      expect((await pub.post(`/resources/public_data?ref=gone%40test&ref=${enc(f.resourceRef)}`)).status).toBe(404);
      expect((await pub.post(`/products/active_products?${tsl}&ref=`)).status).toBe(404);
    });

    it('activeProducts and publicData skip unknown extra refs (GraphQL)', async () => {
      const f = await setupBookable(app);
      const products = await pub.graphql(ACTIVE_PRODUCTS, { refs: [f.resourceUuid, ...GONE], tslRefs: GONE });
      expect(products.body.errors).toBeUndefined();
      expect(products.body.data.activeProducts).toEqual([{ uuid: f.productUuid }]);
      const data = await pub.graphql(PUBLIC_DATA, { refs: [f.resourceUuid, ...GONE] });
      expect(data.body.data.publicData.resource.uuid).toBe(f.resourceUuid);
      expect((await pub.graphql(PUBLIC_DATA, { refs: ['gone@test', f.resourceUuid] })).body.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    });
  });

  describe('consumer mobile numbers', () => {
    const storedMobiles = async (email: string) =>
      sql<{ user_mobile: string | null; customer_mobile: string | null }>(
        app,
        'select u.mobile as user_mobile, c.mobile as customer_mobile from app_user u join customer c on c.user_id = u.id where u.email = ?',
        [email],
      );

    it('accepts national and international spellings and stores E.164 with the provider’s country as default (REST)', async () => {
      const f = await setupBookable(app, { slots: 4 });
      const typed: [string, string][] = [
        ['0170 1234567', '+491701234567'],
        ['0049 171 1234567', '+491711234567'],
        ['+49 (172) 123-4567', '+491721234567'],
        ['+41 79 555 00 11', '+41795550011'],
      ];
      for (const [index, [mobile, stored]] of typed.entries()) {
        const email = `${unique('mobile')}@example.com`;
        const res = await book(pub, f, { ...bookingSlot(f, index), email, mobile });
        expect(res.status, mobile).toBe(201);
        expect(await storedMobiles(email), mobile).toEqual([{ user_mobile: stored, customer_mobile: stored }]);
      }
    });

    it('reads national numbers in the country of the provider’s time zone', async () => {
      const f = await setupBookable(app, { timeZone: 'Europe/Vienna' });
      const email = `${unique('vienna')}@example.com`;
      expect((await book(pub, f, { email, mobile: '0664 1234567' })).status).toBe(201);
      expect((await storedMobiles(email))[0]?.user_mobile).toBe('+436641234567');
    });

    it('refuses only what cannot be a phone number, with a 400 naming mobile', async () => {
      const f = await setupBookable(app);
      for (const mobile of ['12', 'call me', '+49 1', '']) {
        const res = await book(pub, f, { mobile });
        expect(res.status, mobile).toBe(400);
        expect(res.body.errors[0].message, mobile).toMatch(/^mobile must be a phone number/);
      }
    });

    it('normalises the mobile in createAppointmentWithConsumer (GraphQL)', async () => {
      const f = await setupBookable(app);
      const email = `${unique('graph')}@example.com`;
      const input = { start: f.slot.from, end: f.slot.to, timeslotUuid: f.timeslotUuid, email, firstname: 'Greta', lastname: 'Graph', mobile: '0170 1234567' };
      const res = await pub.graphql(CREATE, { ref: f.resourceUuid, input });
      expect(res.body.errors).toBeUndefined();
      expect((await storedMobiles(email))[0]?.user_mobile).toBe('+491701234567');
      const bad = await pub.graphql(CREATE, { ref: f.resourceUuid, input: { ...input, email: `${unique('bad')}@example.com`, mobile: 'call me' } });
      expect(bad.body.errors?.[0]?.message).toMatch(/^mobile must be a phone number/);
    });
  });

  describe('CRM-managed users', () => {
    it('a booking with a staff member’s e-mail leaves that user unchanged (GraphQL)', async () => {
      const f = await setupBookable(app);
      const input = { start: f.slot.from, end: f.slot.to, timeslotUuid: f.timeslotUuid, email: f.email.toUpperCase(), firstname: 'Eve', lastname: 'Public', mobile: '0170 6660000' };
      const res = await pub.graphql(CREATE, { ref: f.resourceUuid, input });
      expect(res.body.errors).toBeUndefined();
      const owner = await sql(app, 'select first_name, last_name, mobile from app_user where email = ?', [f.email]);
      expect(owner).toEqual([{ first_name: 'Olga', last_name: 'Owner', mobile: null }]);
    });
  });

  describe('case and spelling of CRM inputs', () => {
    const CREATE_USER = `mutation ($input: CreateUserInput!) { createUser(input: $input) { user { email } } }`;
    const languageOf = async (table: 'app_user' | 'provider', column: string, value: string) =>
      (await sql<{ language: string }>(app, `select language from ${table} where ${column} = ?`, [value]))[0]?.language;

    it('create user: language DE, de_DE, de-DE, en-GB and e-mails with capitals are stored as de/en and lower case (REST)', async () => {
      const { crmId, api } = await app.newCrm();
      for (const [language, stored] of [['DE', 'de'], ['de_DE', 'de'], ['de-DE', 'de'], ['en-GB', 'en'], ['EN', 'en']] as const) {
        const id = unique('case');
        const res = await api.post(`/crms/${crmId}/user`, { reference: `${id}@crm`, email: `${id.toUpperCase()}@Example.COM`, username: id, lastName: 'Case', language });
        expect(res.status, language).toBe(201);
        expect(res.body.user.email).toBe(`${id}@example.com`);
        expect(await languageOf('app_user', 'email', `${id}@example.com`), language).toBe(stored);
      }
      const french = await api.post(`/crms/${crmId}/user`, { reference: `${unique()}@crm`, email: `${unique()}@example.com`, username: unique('fr'), lastName: 'Case', language: 'fr' });
      expect(french.status).toBe(400);
      expect(french.body.errors[0].message).toBe('language must be one of de, en');
    });

    it('create user (GraphQL): language is the enum Language, DE is stored as de; the REST spellings (de_DE) are refused with 400', async () => {
      const { api } = await app.newCrm();
      const id = unique('gql');
      const res = await api.graphql(CREATE_USER, { input: { reference: `${id}@crm`, email: `${id}@EXAMPLE.com`, username: id, lastName: 'Case', language: 'DE' } });
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.createUser.user.email).toBe(`${id}@example.com`);
      expect(await languageOf('app_user', 'email', `${id}@example.com`)).toBe('de');
      const other = unique('gql');
      const refused = await api.graphql(CREATE_USER, { input: { reference: `${other}@crm`, email: `${other}@example.com`, username: other, lastName: 'Case', language: 'de_DE' } });
      expect(refused.status).toBe(400);
      expect(refused.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
      expect(await languageOf('app_user', 'email', `${other}@example.com`)).toBeUndefined();
    });

    it('create provider: language EN and an e-mail with capitals are stored as en and lower case', async () => {
      const f = await setupScheduling(app);
      const id = unique('prov');
      const res = await f.api.post(`/crms/${f.crmId}/provider`, {
        reference: `${id}@test`,
        ownerReference: f.ownerRef,
        accountReference: f.accountRef,
        name: 'Cased',
        email: `${id.toUpperCase()}@Example.com`,
        language: 'EN',
      });
      expect(res.status).toBe(201);
      expect(await languageOf('provider', 'reference', `${id}@test`)).toBe('en');
      expect((await sql<{ email: string }>(app, 'select email from provider where reference = ?', [`${id}@test`]))[0]?.email).toBe(`${id}@example.com`);
    });

    it('acceptBookings and defaultAcceptBookings take "TRUE", "True", "false"; the answer shows the stored boolean', async () => {
      const f = await setupScheduling(app);
      expect((await createAppointment(f, { acceptBookings: 'TRUE' })).acceptBookings).toBe(true);
      expect((await createAppointment(f, { acceptBookings: 'True', start: '2027-03-02T10:00', end: '2027-03-02T11:00' })).acceptBookings).toBe(true);
      expect((await createAppointment(f, { acceptBookings: 'false', start: '2027-03-03T10:00', end: '2027-03-03T11:00' })).acceptBookings).toBe(false);
      const bad = await f.api.post(`${f.base}/appointments`, { reference: `a-${unique()}@test`, start: '2027-03-04T10:00', end: '2027-03-04T11:00', resourceReference: f.resourceRef, productReference: f.productRef, acceptBookings: 'yes' });
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0].message).toContain('acceptBookings');
      const timeslot = await f.api.post(`${f.base}/timeslots`, {
        timeslots: [{ resourceReference: f.resourceRef, start: '2027-04-01T09:00', end: '2027-04-01T10:00', raster: 30, defaultCapacity: 1, defaultAcceptBookings: 'TRUE', state: 'BOOKABLE' }],
      });
      expect(timeslot.status).toBe(201);
      expect(timeslot.body.timeslots[0].defaultAcceptBookings).toBe(true);
    });

    it('query booleans take TRUE/True/FALSE', async () => {
      const f = await setupScheduling(app);
      await createAppointment(f);
      for (const value of ['TRUE', 'True', 'FALSE', 'False']) {
        expect((await f.api.get(`${f.base}/appointments?includeArchived=${value}`)).status, value).toBe(200);
      }
    });
  });

  describe('product durations filter only a chosen product', () => {
    const UPCOMING_PRODUCTS = `query ($ref: String!, $prdRef: String) {
      upcomingBookables(ref: $ref, prdRef: $prdRef) { groups { bookables { start productUuid products { uuid } } } }
    }`;

    it('without prdRef a slot no product fits by duration is listed with every product; with prdRef, reserve or product_uuid the durations apply (REST)', async () => {
      const f = await setupBookable(app, { slots: 2, product: { minDuration: 60 } });
      const listed = bookablesOf((await upcoming(pub, f.resourceUuid)).body);
      expect(listed.map((b) => [new Date(b.start).toISOString(), b.product_uuid, b.products])).toEqual([
        [slotOf(f, 0).from, f.productUuid, [{ uuid: f.productUuid, name: 'Viewing' }]],
        [slotOf(f, 1).from, f.productUuid, [{ uuid: f.productUuid, name: 'Viewing' }]],
      ]);
      expect(bookablesOf((await upcoming(pub, f.resourceUuid, `prdRef=${f.productUuid}`)).body ?? {})).toEqual([]);
      const reserved = await reserve(pub, f);
      expect(reserved.status).toBe(400);
      expect(reserved.body.errors[0].message).toContain('product_uuid');
      expect((await book(pub, f, { product_uuid: f.productUuid })).status).toBe(400);
      // A booking that names no product takes the slot as listed, with its only product.
      const booked = await book(pub, f, { product_uuid: undefined });
      expect(booked.status).toBe(201);
      expect(booked.body.createdAppointment.product_uuid).toBe(f.productUuid);
    });

    it('lists a slot with only the products that fit by duration when some do', async () => {
      const f = await setupBookable(app, { slots: 1, product: { maxDuration: 20 } });
      const short = await addProduct(f, { name: 'Short', maxDuration: 30 });
      await f.api.post(`/crms/${f.crmId}/provider/${enc(f.providerRef)}/resources/${enc(f.resourceRef)}`, { products: [f.productRef, short.ref] });
      const [slot] = bookablesOf((await upcoming(pub, f.resourceUuid)).body);
      expect(slot.products).toEqual([{ uuid: short.uuid, name: 'Short' }]);
    });

    it('upcomingBookables lists the slot without prdRef and hides it with prdRef (GraphQL)', async () => {
      const f = await setupBookable(app, { slots: 1, product: { minDuration: 60 } });
      const all = await pub.graphql(UPCOMING_PRODUCTS, { ref: f.resourceUuid });
      expect(all.body.errors).toBeUndefined();
      expect(all.body.data.upcomingBookables.groups.flatMap((g: { bookables: unknown[] }) => g.bookables)).toEqual([
        { start: expect.any(String), productUuid: f.productUuid, products: [{ uuid: f.productUuid }] },
      ]);
      const chosen = await pub.graphql(UPCOMING_PRODUCTS, { ref: f.resourceUuid, prdRef: f.productUuid });
      expect(chosen.body.data.upcomingBookables.groups).toEqual([]);
    });
  });
});

/** start/end of slot `index` of the fixture for a booking body. */
function bookingSlot(f: Parameters<typeof slotOf>[0], index: number): { start: string; end: string } {
  const { from, to } = slotOf(f, index);
  return { start: from, end: to };
}
