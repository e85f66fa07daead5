import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BookingFixture, setupBookable } from '../support/booking-fixtures.js';
import {
  addProduct,
  addResource,
  addTimeslot,
  bookablesOf,
  book,
  providerPath,
  reserve,
  resourceRefs,
  setChannel,
  slotOf,
  upcoming,
  updateResource,
} from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import type { ApiClient } from '../support/http.js';
import { createResource } from '../support/offerings-fixtures.js';
import { setupProvider } from '../support/fixtures.js';

const MINUTE = 60_000;

describe('booking flow: GET /resources/:ref/upcoming_bookables', () => {
  let app: TestApp;
  let pub: ApiClient;

  beforeAll(async () => {
    app = await startTestApp();
    pub = app.anonymous;
  });
  afterEach(() => app.clock.reset());
  afterAll(async () => app?.close());

  describe('resource references', () => {
    it('accepts the UUID, the full form resourceId@providerUuid@platform and the short form resourceId@platform', async () => {
      const f = await setupBookable(app);
      const refs = resourceRefs(f);
      expect(refs.full).toBe(`${f.resourceRef.split('@')[0]}@${f.providerUuid}@test`);
      const answers = await Promise.all([refs.uuid, refs.full, refs.short].map((ref) => upcoming(pub, ref)));
      for (const res of answers) {
        expect(res.status).toBe(200);
        expect(bookablesOf(res.body)).toHaveLength(4);
      }
      expect(answers[1]!.body).toEqual(answers[0]!.body);
      expect(answers[2]!.body).toEqual(answers[0]!.body);
    });

    it('refuses an unknown reference with 404, and a short reference two CRMs use as ambiguous (the full form still works)', async () => {
      const f = await setupBookable(app);
      expect((await upcoming(pub, 'nope@test')).status).toBe(404);
      expect((await upcoming(pub, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
      expect((await upcoming(pub, `x@${f.providerUuid}@test`)).status).toBe(404);

      const other = await setupBookable(app);
      await createResource(other.api, other.crmId, other.providerRef, { reference: f.resourceRef });
      const ambiguous = await upcoming(pub, f.resourceRef);
      expect(ambiguous.status).toBe(404);
      expect(ambiguous.body.errors[0].message).toContain('ambiguous');
      expect((await upcoming(pub, resourceRefs(f).full)).status).toBe(200);
      expect((await upcoming(pub, f.resourceUuid)).status).toBe(200);
    });
  });

  describe('the grid', () => {
    it('cuts BOOKABLE timeslots by raster and leaves CREATED timeslots out', async () => {
      const f = await setupBookable(app, { slots: 4, raster: 30 });
      const day = f.slot.from.slice(0, 10);
      // A CREATED (planning) timeslot on the next day: none of its slots may show.
      const next = new Date(new Date(f.slot.from).getTime() + 86_400_000).toISOString().slice(0, 10);
      await addTimeslot(f, { start: `${next}T09:00`, end: `${next}T12:00`, state: 'CREATED' });

      const res = await upcoming(pub, f.resourceUuid);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual([day, 'public_visible']);
      const starts = res.body[day].map((b: { start: string }) => b.start);
      expect(starts).toEqual([`${day}T09:00:00+01:00`, `${day}T09:30:00+01:00`, `${day}T10:00:00+01:00`, `${day}T10:30:00+01:00`].map(fixOffset(f)));
      for (const bookable of res.body[day]) {
        expect(new Date(bookable.end).getTime() - new Date(bookable.start).getTime()).toBe(30 * MINUTE);
      }
    });

    it('shows exactly the documented fields of a models.Bookable', async () => {
      const f = await setupBookable(app, { capacity: 4 });
      const [first] = bookablesOf((await upcoming(pub, f.resourceUuid)).body);
      const day = f.slot.from.slice(0, 10);
      expect(first).toEqual({
        start: expect.stringMatching(/^\d{4}-\d\d-\d\dT09:00:00\+0[12]:00$/),
        end: expect.stringMatching(/T09:30:00\+0[12]:00$/),
        formattedStart: `${day} 09:00`,
        formattedEnd: `${day} 09:30`,
        timeslot_uuid: f.timeslotUuid,
        appointment_uuid: null,
        product_uuid: f.productUuid,
        resource_uuid: f.resourceUuid,
        product_name: 'Viewing',
        resource_name: 'Agent',
        contact_channel: null,
        capacity: 4,
        capacity_left: 4,
        products: [{ uuid: f.productUuid, name: 'Viewing' }],
        kind: 'models.Bookable',
      });
      expect(new Date(first.start).toISOString()).toBe(f.slot.from);
    });

    it('leaves past slots out (the settable clock moves into the timeslot)', async () => {
      const f = await setupBookable(app, { slots: 4 });
      app.clock.set(new Date(new Date(f.slot.from).getTime() + 45 * MINUTE));
      const starts = bookablesOf((await upcoming(pub, f.resourceUuid)).body).map((b) => new Date(b.start).toISOString());
      expect(starts).toEqual([slotOf(f, 2).from, slotOf(f, 3).from]);

      app.clock.set(new Date(new Date(f.slot.from).getTime() + 3 * 30 * MINUTE));
      const late = await upcoming(pub, f.resourceUuid);
      expect(late.status).toBe(204);
    });

    it('answers 204 with an empty body when nothing is bookable', async () => {
      const f = await setupBookable(app);
      await f.api.put(`${providerPath(f)}/timeslots/${encodeURIComponent((await timeslotReference(f))!)}`, { state: 'CREATED' });
      const res = await upcoming(pub, f.resourceUuid);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
    });

    it('leaves archived resources out', async () => {
      const f = await setupBookable(app);
      const second = await addResource(f);
      const day = f.slot.from.slice(0, 10);
      await addTimeslot({ ...f, resourceRef: second.ref }, { start: `${day}T14:00`, end: `${day}T15:00` });
      expect(bookablesOf((await upcoming(pub, f.resourceUuid, `ref=${encodeURIComponent(second.ref)}`)).body)).toHaveLength(6);

      await updateResource(f, second.ref, { archived: true });
      const merged = await upcoming(pub, f.resourceUuid, `ref=${encodeURIComponent(second.ref)}`);
      expect(bookablesOf(merged.body).map((b) => b.resource_uuid)).toEqual(Array(4).fill(f.resourceUuid));

      await updateResource(f, f.resourceRef, { archived: true });
      expect((await upcoming(pub, f.resourceUuid)).status).toBe(204);
    });

    it('shows start and end with the offset in force: +01:00 in winter, +02:00 in summer, no slot in the spring-forward gap', async () => {
      app.clock.set('2027-03-20T12:00:00Z');
      const f = await setupBookable(app, { slots: 2 }); // 2027-03-27, still winter time
      await addTimeslot(f, { start: '2027-03-28T00:00', end: '2027-03-28T06:00', raster: 60 });
      await addTimeslot(f, { start: '2027-04-01T09:00', end: '2027-04-01T10:00', raster: 60 });
      const res = await upcoming(pub, f.resourceUuid);
      expect(res.body['2027-03-27'].map((b: { start: string }) => b.start)).toEqual(['2027-03-27T09:00:00+01:00', '2027-03-27T09:30:00+01:00']);
      // Six wall-clock hours are five real hours that night: 02:00-03:00 does not exist.
      expect(res.body['2027-03-28'].map((b: { start: string; end: string }) => `${b.start}/${b.end}`)).toEqual([
        '2027-03-28T00:00:00+01:00/2027-03-28T01:00:00+01:00',
        '2027-03-28T01:00:00+01:00/2027-03-28T03:00:00+02:00',
        '2027-03-28T03:00:00+02:00/2027-03-28T04:00:00+02:00',
        '2027-03-28T04:00:00+02:00/2027-03-28T05:00:00+02:00',
        '2027-03-28T05:00:00+02:00/2027-03-28T06:00:00+02:00',
      ]);
      expect(res.body['2027-04-01'][0]).toMatchObject({ start: '2027-04-01T09:00:00+02:00', end: '2027-04-01T10:00:00+02:00', formattedStart: '2027-04-01 09:00' });
    });
  });

  describe('capacity and kinds', () => {
    it('counts booked participations and live holds, not expired ones; a booked slot becomes a models.LotAppointment', async () => {
      const f = await setupBookable(app, { capacity: 3 });
      const hold = await reserve(pub, f);
      expect(hold.status).toBe(200);
      expect((await book(pub, f)).status).toBe(201);
      const appointmentUuid = hold.body.participation.appointment_uuid;

      const [lot, next] = bookablesOf((await upcoming(pub, f.resourceUuid)).body);
      expect(lot).toMatchObject({ kind: 'models.LotAppointment', appointment_uuid: appointmentUuid, timeslot_uuid: f.timeslotUuid, capacity: 3, capacity_left: 1 });
      expect(new Date(lot.start).toISOString()).toBe(f.slot.from);
      expect(next).toMatchObject({ kind: 'models.Bookable', appointment_uuid: null, timeslot_uuid: f.timeslotUuid, capacity_left: 3 });

      // The hold lasts 3 minutes; afterwards its place counts as free again even before the worker removes it.
      app.clock.advance(3 * MINUTE - 1000);
      expect(bookablesOf((await upcoming(pub, f.resourceUuid)).body)[0].capacity_left).toBe(1);
      app.clock.advance(2000);
      expect(bookablesOf((await upcoming(pub, f.resourceUuid)).body)[0].capacity_left).toBe(2);
    });

    it('drops a LotAppointment that is full and keeps the neighbours', async () => {
      const f = await setupBookable(app, { capacity: 1 });
      expect((await book(pub, f)).status).toBe(201);
      const starts = bookablesOf((await upcoming(pub, f.resourceUuid)).body).map((b) => new Date(b.start).toISOString());
      expect(starts).toEqual([slotOf(f, 1).from, slotOf(f, 2).from, slotOf(f, 3).from]);
    });

    it('keeps a slot closed once the CRM cancelled the appointment made from it, as reserve does', async () => {
      const f = await setupBookable(app, { capacity: 2 });
      const hold = await reserve(pub, f);
      expect(hold.status).toBe(200);
      const appointments = await f.api.get(`${providerPath(f)}/appointments`);
      const reference = appointments.body.find((a: { uuid: string }) => a.uuid === hold.body.participation.appointment_uuid).reference;
      expect((await f.api.delete(`${providerPath(f)}/appointments`, { appointmentReference: reference })).status).toBe(200);

      const starts = bookablesOf((await upcoming(pub, f.resourceUuid)).body).map((b) => new Date(b.start).toISOString());
      expect(starts).not.toContain(f.slot.from);
      expect((await reserve(pub, f)).status).toBe(412);
    });

    it('lists an appointment the CRM opened for bookings as a models.LotAppointment without timeslot', async () => {
      const f = await setupBookable(app);
      const day = new Date(new Date(f.slot.from).getTime() + 2 * 86_400_000).toISOString().slice(0, 10);
      const created = await f.api.post(`${providerPath(f)}/appointments`, {
        reference: `appointment-${Date.now()}@test`,
        start: `${day}T15:00`,
        end: `${day}T16:00`,
        resourceReference: f.resourceRef,
        productReference: f.productRef,
        capacity: 2,
        acceptBookings: true,
      });
      expect(created.status).toBe(201);
      const lot = (await upcoming(pub, f.resourceUuid)).body[day][0];
      expect(lot).toMatchObject({ kind: 'models.LotAppointment', timeslot_uuid: null, appointment_uuid: expect.any(String), capacity: 2, capacity_left: 2, product_uuid: f.productUuid });
    });
  });

  describe('formats and languages', () => {
    it('groups by groupFormat and formats by timeFormat with German month and day names by default', async () => {
      app.clock.set('2027-02-20T08:00:00Z');
      const f = await setupBookable(app, { slots: 2 }); // Saturday 2027-02-27
      const res = await upcoming(pub, f.resourceUuid, `groupFormat=${encodeURIComponent('MMMM yyyy')}&timeFormat=${encodeURIComponent("EEEE, d. MMMM yy HH:mm 'Uhr'")}`);
      expect(Object.keys(res.body)).toEqual(['Februar 2027', 'public_visible']);
      expect(res.body['Februar 2027'][0]).toMatchObject({ formattedStart: 'Samstag, 27. Februar 27 09:00 Uhr', formattedEnd: 'Samstag, 27. Februar 27 09:30 Uhr' });
    });

    it('translates month and day names by languageTag', async () => {
      app.clock.set('2027-02-20T08:00:00Z');
      const f = await setupBookable(app, { slots: 1 });
      const query = (tag: string) => `languageTag=${tag}&groupFormat=${encodeURIComponent('EEE dd MMM')}&timeFormat=${encodeURIComponent('EEEE d MMMM yyyy, HH:mm')}`;
      const english = await upcoming(pub, f.resourceUuid, query('en'));
      expect(english.body['Sat 27 Feb'][0].formattedStart).toBe('Saturday 27 February 2027, 09:00');
      const german = await upcoming(pub, f.resourceUuid, query('de-DE'));
      expect(german.body['Sa. 27 Feb.'][0].formattedStart).toBe('Samstag 27 Februar 2027, 09:00');
      const plain = await upcoming(pub, f.resourceUuid, `groupFormat=yyyy/MM/d&timeFormat=HH:mm`);
      expect(plain.body['2027/02/27'][0]).toMatchObject({ formattedStart: '09:00', formattedEnd: '09:30' });
    });

    it('refuses a pattern with an unknown letter with 400 naming the parameter', async () => {
      const f = await setupBookable(app, { slots: 1 });
      const res = await upcoming(pub, f.resourceUuid, 'groupFormat=yyyy-MM-dd%20Uhr');
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toContain('groupFormat');
    });
  });

  describe('query parameters ref, prdRef and channelKey', () => {
    it('merges the resources of repeatable ref parameters, sorted by start', async () => {
      const f = await setupBookable(app, { slots: 2 });
      const day = f.slot.from.slice(0, 10);
      const second = await addResource(f, { publicName: 'Second agent' });
      const third = await addResource(f, { publicName: 'Third agent' });
      await addTimeslot({ ...f, resourceRef: second.ref }, { start: `${day}T09:15`, end: `${day}T09:45` });
      await addTimeslot({ ...f, resourceRef: third.ref }, { start: `${day}T08:00`, end: `${day}T08:30` });
      const res = await upcoming(pub, resourceRefs(f).full, `ref=${encodeURIComponent(second.ref)}&ref=${third.uuid}`);
      expect(res.body[day].map((b: { resource_name: string; formattedStart: string }) => `${b.formattedStart.slice(11)} ${b.resource_name}`)).toEqual([
        '08:00 Third agent',
        '09:00 Agent',
        '09:15 Second agent',
        '09:30 Agent',
      ]);
    });

    it('formats and groups each slot in its own provider’s zone when resources of several providers are listed together', async () => {
      const f = await setupBookable(app, { slots: 1 });
      const day = f.slot.from.slice(0, 10);
      // A provider in New York with a slot at 19:00 its time on the same day: 01:00 the next day in Berlin.
      const ny = { ...f, ...(await setupProvider(f.api, f.crmId, { timeZone: 'America/New_York' })) };
      const product = await addProduct(ny);
      const resource = await addResource({ ...ny, productRef: product.ref }, { publicName: 'New York agent' });
      await addTimeslot({ ...ny, resourceRef: resource.ref }, { start: `${day}T19:00`, end: `${day}T19:30` });
      const res = await upcoming(pub, f.resourceUuid, `ref=${resource.uuid}&timeFormat=${encodeURIComponent('dd.MM. HH:mm')}`);
      expect(res.status).toBe(200);
      const view = (b: { start: string; formattedStart: string; resource_name: string }) => `${b.resource_name} ${b.start.slice(11)} ${b.formattedStart}`;
      expect(Object.keys(res.body).filter((key) => key !== 'public_visible')).toEqual([day]);
      const dayMonth = `${day.slice(8, 10)}.${day.slice(5, 7)}.`;
      expect(res.body[day].map(view)).toEqual([
        expect.stringMatching(new RegExp(`^Agent 09:00:00\\+0[12]:00 ${dayMonth} 09:00$`)),
        expect.stringMatching(new RegExp(`^New York agent 19:00:00-0[45]:00 ${dayMonth} 19:00$`)),
      ]);
      // The same with the New York resource named first: the Berlin slot still shows Berlin's time.
      const swapped = await upcoming(pub, resource.uuid, `ref=${f.resourceUuid}`);
      expect(bookablesOf(swapped.body).map((b: { formattedStart: string }) => b.formattedStart)).toEqual([`${day} 09:00`, `${day} 19:00`]);
      // Booked through the Berlin resource’s address (the slot’s only product: a product_uuid must be the first provider’s),
      // the New York slot’s answer shows New York’s time too.
      const slot = res.body[day][1];
      const booked = await book(pub, f, { start: slot.start, end: slot.end, timeslot_uuid: slot.timeslot_uuid, product_uuid: undefined }, `ref=${resource.uuid}`);
      expect(booked.status, booked.text).toBe(201);
      expect(booked.body.createdAppointment).toMatchObject({ start: slot.start, formattedStart: `${day} 19:00`, formattedEnd: `${day} 19:30` });
    });

    it('prdRef keeps the slots that leave the product’s lead and follow-up time free; a booking blocks its neighbours', async () => {
      const f = await setupBookable(app, { slots: 8 }); // 09:00-13:00
      const travel = await addProduct(f, { leadTimeMinutes: 30, followUpTimeMinutes: 30 });
      await updateResource(f, f.resourceRef, { products: [f.productRef, travel.ref] });
      const local = (b: { formattedStart: string }) => b.formattedStart.slice(11);

      const free = await upcoming(pub, f.resourceUuid, `prdRef=${encodeURIComponent(travel.ref)}`);
      // Lead and follow-up time must lie inside the timeslot: not 09:00, not 12:30.
      expect(bookablesOf(free.body).map(local)).toEqual(['09:30', '10:00', '10:30', '11:00', '11:30', '12:00']);
      expect(bookablesOf(free.body).every((b) => b.product_uuid === travel.uuid)).toBe(true);

      // Book 11:00-11:30 with the product without buffer times.
      expect((await book(pub, f, { start: slotOf(f, 4).from, end: slotOf(f, 4).to })).status).toBe(201);
      const withTravel = await upcoming(pub, f.resourceUuid, `prdRef=${travel.uuid}`);
      expect(bookablesOf(withTravel.body).map(local)).toEqual(['09:30', '10:00', '12:00']);
      const plain = await upcoming(pub, f.resourceUuid, `prdRef=${encodeURIComponent(f.productRef)}`);
      expect(bookablesOf(plain.body).map((b) => `${local(b)} ${b.kind}`)).toEqual([
        '09:00 models.Bookable',
        '09:30 models.Bookable',
        '10:00 models.Bookable',
        '10:30 models.Bookable',
        '11:00 models.LotAppointment',
        '11:30 models.Bookable',
        '12:00 models.Bookable',
        '12:30 models.Bookable',
      ]);
      // Without prdRef each slot lists only the products it can take.
      const all = bookablesOf((await upcoming(pub, f.resourceUuid)).body);
      const productsAt = (time: string) => all.find((b) => local(b) === time)!.products.map((p: { uuid: string }) => p.uuid).sort();
      expect(productsAt('10:00')).toEqual([f.productUuid, travel.uuid].sort());
      expect(productsAt('10:30')).toEqual([f.productUuid]);
      expect(all.find((b) => local(b) === '10:30')!.product_uuid).toBe(f.productUuid);
      expect(all.find((b) => local(b) === '10:00')!.product_uuid).toBeNull();

      expect((await upcoming(pub, f.resourceUuid, 'prdRef=unknown@test')).status).toBe(400);
    });

    it('channelKey: an invisible channel shows nothing and public_visible tells', async () => {
      const f = await setupBookable(app, { slots: 2 });
      await setChannel(f, 'RESOURCE_REFERENCE', { visible: false });
      expect((await upcoming(pub, f.resourceUuid, 'channelKey=RESOURCE_REFERENCE')).status).toBe(204);
      const visible = await upcoming(pub, f.resourceUuid);
      expect(visible.status).toBe(200);
      expect(visible.body.public_visible).toBe(true);

      // With another visible resource merged in, the answer says the main resource is not publicly visible.
      const second = await addResource(f);
      const day = f.slot.from.slice(0, 10);
      await addTimeslot({ ...f, resourceRef: second.ref }, { start: `${day}T14:00`, end: `${day}T14:30` });
      const merged = await upcoming(pub, f.resourceUuid, `channelKey=RESOURCE_REFERENCE&ref=${second.uuid}`);
      expect(merged.status).toBe(200);
      expect(merged.body.public_visible).toBe(false);
      expect(bookablesOf(merged.body).map((b) => b.resource_uuid)).toEqual([second.uuid]);

      expect((await upcoming(pub, f.resourceUuid, 'channelKey=NOPE')).status).toBe(400);
    });

    it('channelKey: the channel’s product filter and exclusive products', async () => {
      const f = await setupBookable(app, { slots: 1 });
      const extra = await addProduct(f);
      const vip = await addProduct(f, { name: 'VIP tour' });
      await updateResource(f, f.resourceRef, { products: [f.productRef, extra.ref, vip.ref] });
      await setChannel(f, 'CALENDAR_PUBLIC', { products: [extra.ref, vip.ref] });
      await setChannel(f, 'RESOURCE_EXCLUSIVE', { exclusiveProducts: [vip.ref] });
      const productsOn = async (channel: string) =>
        bookablesOf((await upcoming(pub, f.resourceUuid, `channelKey=${channel}`)).body)[0].products.map((p: { uuid: string }) => p.uuid).sort();

      expect(await productsOn('RESOURCE_PUBLIC')).toEqual([f.productUuid, extra.uuid].sort());
      expect(await productsOn('CALENDAR_PUBLIC')).toEqual([extra.uuid]);
      expect(await productsOn('RESOURCE_EXCLUSIVE')).toEqual([f.productUuid, extra.uuid, vip.uuid].sort());
      expect((await upcoming(pub, f.resourceUuid, `channelKey=RESOURCE_PUBLIC&prdRef=${vip.uuid}`)).status).toBe(204);
      expect((await upcoming(pub, f.resourceUuid, `channelKey=CALENDAR_PUBLIC&prdRef=${f.productUuid}`)).status).toBe(204);
      expect((await upcoming(pub, f.resourceUuid, `channelKey=RESOURCE_EXCLUSIVE&prdRef=${vip.uuid}`)).status).toBe(200);
    });
  });

  /** The fixture's slot offset may be +01:00 or +02:00 depending on the date the test runs. */
  function fixOffset(f: BookingFixture) {
    const offset = new Date(f.slot.from).getUTCHours() === 8 ? '+01:00' : '+02:00';
    return (value: string) => value.replace('+01:00', offset);
  }

  async function timeslotReference(f: BookingFixture): Promise<string | undefined> {
    const from = new Date(new Date(f.slot.from).getTime() - 86_400_000).toISOString().slice(0, 16);
    const to = new Date(new Date(f.slot.from).getTime() + 86_400_000).toISOString().slice(0, 16);
    const res = await f.api.get(`${providerPath(f)}/resource/${encodeURIComponent(f.resourceRef)}/timeslots?from=${from}Z&to=${to}Z`);
    return res.body.find((t: { uuid: string }) => t.uuid === f.timeslotUuid)?.reference;
  }
});
