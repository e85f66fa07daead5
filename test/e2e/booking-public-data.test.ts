import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BookingFixture, setupBookable } from '../support/booking-fixtures.js';
import { addProduct, addResource, book, bookablesOf, providerPath, setChannel, slotOf, upcoming, updateResource } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import type { ApiClient } from '../support/http.js';
import { createStaffUser } from '../support/offerings-fixtures.js';

const q = (params: [string, string][]) => params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');

describe('booking flow: active_products, public_data and booking channels', () => {
  let app: TestApp;
  let pub: ApiClient;

  beforeAll(async () => {
    app = await startTestApp();
    pub = app.anonymous;
  });
  afterAll(async () => app?.close());

  const activeProducts = (params: [string, string][]) => pub.post(`/products/active_products?${q(params)}`);
  const publicData = (params: [string, string][]) => pub.post(`/resources/public_data?${q(params)}`);

  /** A resource offering the fixture's product, a product with times and a VIP product exclusive to RESOURCE_EXCLUSIVE. */
  async function offering(): Promise<{ f: BookingFixture; timed: { ref: string; uuid: string }; vip: { ref: string; uuid: string } }> {
    const f = await setupBookable(app);
    const timed = await addProduct(f, { name: 'Consultation', description: 'Talk it through', minDuration: 30, maxDuration: 90, leadTimeMinutes: 15, followUpTimeMinutes: 10 });
    const vip = await addProduct(f, { name: 'VIP tour' });
    await updateResource(f, f.resourceRef, { products: [f.productRef, timed.ref, vip.ref] });
    await setChannel(f, 'RESOURCE_EXCLUSIVE', { exclusiveProducts: [vip.ref] });
    return { f, timed, vip };
  }

  describe('POST /products/active_products', () => {
    it('requires at least one of ref and tslRefs (400)', async () => {
      for (const res of [await activeProducts([]), await activeProducts([['channelKey', 'RESOURCE_PUBLIC']]), await pub.post('/products/active_products?ref=')]) {
        expect(res.status).toBe(400);
        expect(res.body.errors[0].message).toBe('at least one of the query parameters ref or tslRefs is required');
      }
      expect((await activeProducts([['ref', 'unknown@test']])).status).toBe(404);
    });

    it('lists the products of a resource with the documented shape, filtered by channel', async () => {
      const { f, timed, vip } = await offering();
      const res = await activeProducts([['ref', f.resourceRef]]);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        products: [
          { uuid: timed.uuid, name: 'Consultation', description: 'Talk it through', minDuration: 30, maxDuration: 90, leadTimeMinutes: 15, followUpTimeMinutes: 10, exclusive: false },
          { uuid: f.productUuid, name: 'Viewing', description: null, minDuration: null, maxDuration: null, leadTimeMinutes: null, followUpTimeMinutes: null, exclusive: false },
        ],
      });
      const exclusive = await activeProducts([['ref', f.resourceUuid], ['channelKey', 'RESOURCE_EXCLUSIVE']]);
      expect(exclusive.body.products.map((p: { name: string; exclusive: boolean }) => `${p.name}:${p.exclusive}`)).toEqual([
        'Consultation:false',
        'Viewing:false',
        'VIP tour:true',
      ]);
      await setChannel(f, 'CALENDAR_PUBLIC', { products: [timed.ref] });
      expect((await activeProducts([['ref', f.resourceRef], ['channelKey', 'CALENDAR_PUBLIC']])).body.products.map((p: { uuid: string }) => p.uuid)).toEqual([timed.uuid]);
      await setChannel(f, 'RESOURCE_REFERENCE', { visible: false });
      expect((await activeProducts([['ref', f.resourceRef], ['channelKey', 'RESOURCE_REFERENCE']])).body).toEqual({ products: [] });
      expect(vip.uuid).toBeTruthy();
    });

    it('accepts timeslot and appointment UUIDs and references in tslRefs; an appointment offers only its product', async () => {
      const { f, timed } = await offering();
      // The second slot: the first leaves no room for the 15 minutes lead time inside the timeslot.
      const booked = await book(pub, f, { product_uuid: timed.uuid, start: slotOf(f, 1).from, end: slotOf(f, 1).to });
      expect(booked.status).toBe(201);
      const appointmentUuid = booked.body.createdAppointment.appointment_uuid;

      const byTimeslot = await activeProducts([['tslRefs', f.timeslotUuid]]);
      expect(byTimeslot.body.products).toHaveLength(2);
      const byAppointment = await activeProducts([['tslRefs', appointmentUuid]]);
      expect(byAppointment.body.products.map((p: { uuid: string }) => p.uuid)).toEqual([timed.uuid]);

      const timeslots = await f.api.get(
        `${providerPath(f)}/resource/${encodeURIComponent(f.resourceRef)}/timeslots?from=${f.slot.from.slice(0, 10)}T00:00&to=${f.slot.from.slice(0, 10)}T23:59`,
      );
      const timeslotReference = timeslots.body[0].reference;
      expect((await activeProducts([['tslRefs', timeslotReference]])).body.products).toHaveLength(2);
      const both = await activeProducts([['tslRefs', appointmentUuid], ['ref', f.resourceUuid]]);
      expect(both.body.products).toHaveLength(2);
      expect((await activeProducts([['tslRefs', '00000000-0000-4000-8000-000000000000']])).status).toBe(404);
    });
  });

  describe('POST /resources/public_data', () => {
    it('requires at least one of ref and tslRefs (400)', async () => {
      const res = await publicData([]);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toContain('ref or tslRefs');
    });

    it('answers the documented shape; the contact falls back to the provider', async () => {
      const { f } = await offering();
      const res = await publicData([['ref', f.resourceRef]]);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        contact: { name: expect.stringMatching(/^Provider /), email: null, mobile: null, phone: null },
        resource: { uuid: f.resourceUuid, name: 'Agent', description: null, contactChannelType: null, msgHelpText: null, url: null, imgUrl: null },
        provider: { name: expect.stringMatching(/^Provider /), description: null, isThemingAllowed: false, isLocalisationAllowed: true, areCustomFieldsAllowed: false },
        channel: { bookingProcess: 'IMMEDIATE' },
      });
      expect((await publicData([['tslRefs', f.timeslotUuid]])).body).toEqual(res.body);
    });

    it('shows the contact person’s profile, the resource texts and the channel’s booking process', async () => {
      const { f } = await offering();
      const profile = await f.api.put(`/crms/${f.crmId}/user/${encodeURIComponent(f.ownerRef)}/generalContactProfile`, {
        name: 'Olga from the office',
        contactChannels: [
          { type: 'email', value: 'office@example.com' },
          { type: 'mobile', value: '+49 170 7654321' },
        ],
      });
      expect(profile.status).toBeLessThan(300);
      await updateResource(f, f.resourceRef, {
        contact: f.ownerRef,
        description: 'Flat viewings',
        website: 'https://example.com/flat',
        imageUrl: 'https://example.com/flat.png',
        messageHelpText: 'Which flat?',
      });
      await setChannel(f, 'CALENDAR_PUBLIC', { bookingProcess: 'REQUESTED' });
      const res = await publicData([['ref', f.resourceUuid], ['channelKey', 'CALENDAR_PUBLIC']]);
      expect(res.body).toMatchObject({
        contact: { name: 'Olga from the office', email: 'office@example.com', mobile: '+49 170 7654321', phone: null },
        resource: { description: 'Flat viewings', contactChannelType: 'mobile', msgHelpText: 'Which flat?', url: 'https://example.com/flat', imgUrl: 'https://example.com/flat.png' },
        channel: { bookingProcess: 'REQUESTED' },
      });
      expect((await publicData([['ref', f.resourceUuid]])).body.channel).toEqual({ bookingProcess: 'IMMEDIATE' });
      // The bookables show the same contact channel.
      expect(bookablesOf((await upcoming(pub, f.resourceUuid)).body)[0].contact_channel).toEqual({ type: 'mobile', value: '+49 170 7654321' });
    });

    it('shows the resource’s own contact profile over the contact person; a contact without profile shows the person', async () => {
      const { f } = await offering();
      const staff = await createStaffUser(f.api, f.crmId, f.providerRef);
      await updateResource(f, f.resourceRef, { contact: staff });
      const person = await publicData([['ref', f.resourceUuid]]);
      expect(person.body.contact).toEqual({ name: 'Staff', email: expect.stringMatching(/^user-.*@example\.com$/), mobile: null, phone: null });
      expect(person.body.resource.contactChannelType).toBeNull();

      // The resource's profile has no channel a consumer is shown: the type comes from the person's general profile.
      const general = await f.api.put(`/crms/${f.crmId}/user/${encodeURIComponent(staff)}/generalContactProfile`, {
        name: 'Sam in general',
        contactChannels: [{ type: 'phone', value: '+49 30 1234567' }],
      });
      expect(general.status).toBeLessThan(300);
      const reference = `desk-${f.resourceRef}`;
      const desk = await f.api.post(`/crms/${f.crmId}/provider/${encodeURIComponent(f.providerRef)}/contactProfile`, {
        reference,
        userReference: staff,
        providerReference: f.providerRef,
        name: 'Front desk',
        contactChannels: [{ type: 'location', value: 'Invalidenstraße 1, Berlin' }],
      });
      expect(desk.status).toBe(201);
      await updateResource(f, f.resourceRef, { contactProfileReference: reference });
      const withDesk = await publicData([['ref', f.resourceUuid]]);
      expect(withDesk.body.contact).toEqual({ name: 'Front desk', email: null, mobile: null, phone: null });
      expect(withDesk.body.resource.contactChannelType).toBe('phone');

      // With a channel a consumer is shown, the resource's profile decides both.
      const updated = await f.api.post(`/crms/${f.crmId}/provider/${encodeURIComponent(f.providerRef)}/contactProfile`, {
        reference,
        userReference: staff,
        providerReference: f.providerRef,
        name: 'Front desk',
        contactChannels: [
          { type: 'location', value: 'Invalidenstraße 1, Berlin' },
          { type: 'email', value: 'desk@example.com' },
        ],
      });
      expect(updated.status).toBe(200);
      const reachable = await publicData([['ref', f.resourceUuid]]);
      expect(reachable.body.contact).toEqual({ name: 'Front desk', email: 'desk@example.com', mobile: null, phone: null });
      expect(reachable.body.resource.contactChannelType).toBe('email');
    });
  });

  describe('booking channels extension: /crms/:crmId/provider/:providerRef/resources/:resourceRef/channels', () => {
    it('lists the four channels with the documented defaults and changes only the fields given', async () => {
      const { f, vip } = await offering();
      const second = await addResource(f);
      const path = `${providerPath(f)}/resources/${encodeURIComponent(second.ref)}/channels`;
      const defaults = await f.api.get(path);
      expect(defaults.status).toBe(200);
      expect(defaults.body).toEqual(
        ['RESOURCE_PUBLIC', 'RESOURCE_EXCLUSIVE', 'RESOURCE_REFERENCE', 'CALENDAR_PUBLIC'].map((channelKey) => ({
          channelKey,
          // RESOURCE_EXCLUSIVE is closed until configured; the others inherit RESOURCE_PUBLIC's defaults.
          visible: channelKey !== 'RESOURCE_EXCLUSIVE',
          bookingProcess: 'IMMEDIATE',
          products: null,
          exclusiveProducts: [],
          acceptedCustomers: [],
        })),
      );
      const saved = await f.api.put(`${path}/CALENDAR_PUBLIC`, { bookingProcess: 'REQUESTED', products: [vip.ref] });
      expect(saved.status).toBe(200);
      expect(saved.body).toEqual({
        'api-info': { version: '1' },
        channel: { channelKey: 'CALENDAR_PUBLIC', visible: true, bookingProcess: 'REQUESTED', products: [vip.ref], exclusiveProducts: [], acceptedCustomers: [] },
      });
      const hidden = await f.api.put(`${path}/CALENDAR_PUBLIC`, { visible: false });
      expect(hidden.body.channel).toMatchObject({ visible: false, bookingProcess: 'REQUESTED', products: [vip.ref] });
      const reset = await f.api.put(`${path}/CALENDAR_PUBLIC`, { products: null });
      expect(reset.body.channel.products).toBeNull();
      expect((await f.api.get(path)).body[3]).toMatchObject({ channelKey: 'CALENDAR_PUBLIC', visible: false, products: null });
    });

    it('refuses bad input (400), unknown resources and other CRMs (404), missing keys (401)', async () => {
      const { f } = await offering();
      const path = `${providerPath(f)}/resources/${encodeURIComponent(f.resourceRef)}/channels`;
      expect((await f.api.put(`${path}/NOPE`, { visible: false })).status).toBe(400);
      expect((await f.api.put(`${path}/RESOURCE_PUBLIC`, { bookingProcess: 'LATER' })).status).toBe(400);
      expect((await f.api.put(`${path}/RESOURCE_PUBLIC`, { products: ['missing@test'] })).status).toBe(400);
      expect((await f.api.put(`${path}/RESOURCE_PUBLIC`, { acceptedCustomers: ['missing@test'] })).status).toBe(400);
      expect((await f.api.put(`${path}/RESOURCE_PUBLIC`, { visible: 'no' })).status).toBe(400);
      expect((await f.api.get(`${providerPath(f)}/resources/unknown@test/channels`)).status).toBe(404);
      const other = await app.newCrm();
      expect((await other.api.get(path.replace(`/crms/${f.crmId}/`, `/crms/${other.crmId}/`))).status).toBe(404);
      expect((await pub.get(path)).status).toBe(401);
    });
  });
});
