import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BookingFixture, setupBookable } from '../support/booking-fixtures.js';
import { addResource, book, providerPath, reserve, setChannel } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { rotateCrmKey } from '../../services/crm/crm.service.js';
import { apiClient } from '../support/http.js';
import {
  APPOINTMENT_SUBSCRIPTION,
  CAPACITY_SUBSCRIPTION,
  type LiveSubscription,
  subscribe,
  untilAppointmentsLive,
  untilLive,
} from '../support/live.js';

const slotAfter = (f: BookingFixture, minutes: number) => ({
  from: new Date(Date.parse(f.slot.from) + minutes * 60_000).toISOString(),
  to: new Date(Date.parse(f.slot.from) + (minutes + 30) * 60_000).toISOString(),
});

/** Local wall-clock `HH:mm` of the fixture's day in Europe/Berlin, as a window bound without offset. */
const wall = (f: BookingFixture, hhmm: string) => `${new Date(f.slot.from).toISOString().slice(0, 10)}T${hhmm}`;

describe('live subscriptions: filtering and CRM authentication', () => {
  let app: TestApp;
  const subs: LiveSubscription[] = [];
  const open = (...args: Parameters<typeof subscribe>) => {
    const sub = subscribe(...args);
    subs.push(sub);
    return sub;
  };

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
  });
  afterAll(async () => {
    await Promise.all(subs.map((sub) => sub.close()));
    await app?.close();
  });

  describe('capacityChanged', () => {
    it('hears only the resources it names (any reference form), only slots in its window', async () => {
      const f = await setupBookable(app, { capacity: 3, slots: 4 });
      const other = await addResource(f);
      const [id, platform] = f.resourceRef.split('@');
      // Full reference form; the window holds only the first slot (09:00-09:30 local).
      const sub = open(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [`${id}@${f.providerUuid}@${platform}`], from: wall(f, '09:00'), to: wall(f, '09:30') }, { field: 'capacityChanged' });
      await untilLive(sub, app, f.resourceUuid, f.slot.from);
      const after = sub.received.length;

      // Another resource of the same provider, and a slot outside the window: nothing.
      const otherTimeslot = await f.api.post(`${providerPath(f)}/timeslots`, {
        timeslots: [{ resourceReference: other.ref, start: wall(f, '09:00'), end: wall(f, '10:00'), raster: 30, defaultCapacity: 2, defaultAcceptBookings: true, state: 'BOOKABLE' }],
      });
      expect(otherTimeslot.status).toBe(201);
      expect((await reserve(app.anonymous, f, slotAfter(f, 30))).status).toBe(200);
      // Then a slot in the window: only this one arrives.
      expect((await reserve(app.anonymous, f)).status).toBe(200);
      const inWindow = await sub.waitFor((item) => item.capacity_left === 2, { after });
      expect(inWindow.item).toMatchObject({ resource_uuid: f.resourceUuid, kind: 'models.LotAppointment', capacity: 3 });
      expect(Date.parse(inWindow.item.start)).toBe(Date.parse(f.slot.from));
      await new Promise((resolve) => setTimeout(resolve, 500));
      // Every item is about the one slot in the window (the 09:30 booking re-announces the timeslot, whose 09:00 slot is in it).
      const real = sub.received.slice(after).filter((r) => !String(r.item.appointment_uuid).startsWith('probe'));
      expect(new Set(real.map((r) => `${r.item.resource_uuid} ${r.item.start}`))).toEqual(new Set([`${f.resourceUuid} ${inWindow.item.start}`]));
      expect(real.at(-1)!.item).toEqual(inWindow.item);
    });

    it('a channel that is not visible yields nothing, the same change on a visible channel arrives', async () => {
      const f = await setupBookable(app, { capacity: 2 });
      const second = await addResource(f);
      await setChannel(f, 'RESOURCE_REFERENCE', { visible: false });
      // The second resource keeps RESOURCE_REFERENCE visible; its probes show when the subscription is live.
      const hidden = open(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [f.resourceUuid, second.uuid], channelKey: 'RESOURCE_REFERENCE' }, { field: 'capacityChanged' });
      const visible = open(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [f.resourceUuid] }, { field: 'capacityChanged' });
      await untilLive(hidden, app, second.uuid);
      await untilLive(visible, app, f.resourceUuid);
      const after = { hidden: hidden.received.length, visible: visible.received.length };
      expect((await reserve(app.anonymous, f)).status).toBe(200);
      await visible.waitFor((item) => item.capacity_left === 1, { after: after.visible });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(hidden.received.slice(after.hidden)).toEqual([]);
      expect(hidden.errors).toEqual([]);
      expect(hidden.completed).toBe(false);
    });

    it('refuses unknown resources and bad arguments with the service error codes', async () => {
      const f = await setupBookable(app);
      const run = async (variables: Record<string, unknown>) => {
        const sub = open(app.baseUrl, CAPACITY_SUBSCRIPTION, variables, { field: 'capacityChanged' });
        await sub.ended();
        return sub.errors[0]?.extensions?.code;
      };
      expect(await run({ refs: ['nobody@nowhere'] })).toBe('NOT_FOUND');
      expect(await run({ refs: [] })).toBe('VALIDATION_FAILED');
      expect(await run({ refs: [f.resourceUuid], from: wall(f, '10:00'), to: wall(f, '09:00') })).toBe('VALIDATION_FAILED');
      expect(await run({ refs: [f.resourceUuid], from: 'tomorrow' })).toBe('VALIDATION_FAILED');
      // channelKey is a ChannelKey: GraphQL refuses another value before the service, naming the enum.
      const channel = open(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [f.resourceUuid], channelKey: 'NOPE' }, { field: 'capacityChanged' });
      await channel.ended();
      expect(channel.errors[0]).toMatchObject({ message: expect.stringContaining('ChannelKey'), extensions: { code: 'BAD_USER_INPUT' } });
      // A document the schema refuses: the same code as over HTTP.
      const unknownField = open(app.baseUrl, 'subscription ($refs: [String!]!) { capacityChanged(refs: $refs) { nope } }', { refs: [f.resourceUuid] }, { field: 'capacityChanged' });
      await unknownField.ended();
      expect(unknownField.errors[0]).toMatchObject({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
      expect(channel.received).toEqual([]);
      // Over HTTP a subscription cannot stream; it is refused with a message pointing to WebSocket.
      const overHttp = await app.anonymous.graphql(CAPACITY_SUBSCRIPTION, { refs: [f.resourceUuid] });
      expect(overHttp.body.errors?.[0]).toMatchObject({ message: expect.stringContaining('WebSocket'), extensions: { code: 'VALIDATION_FAILED' } });
    });
  });

  describe('appointmentChanged', () => {
    let a: BookingFixture;
    let b: BookingFixture;
    let keyA: string;
    let keyB: string;

    beforeAll(async () => {
      a = await setupBookable(app, { capacity: 3 });
      b = await setupBookable(app, { capacity: 3 });
      // The fixtures do not keep their CRM keys; issue fresh ones (the fixtures' clients are not used afterwards).
      keyA = await rotateCrmKey(app.orm.em.fork(), a.crmId);
      keyB = await rotateCrmKey(app.orm.em.fork(), b.crmId);
      a = { ...a, api: apiClient(app.baseUrl, keyA) };
    });

    it('needs a valid key: none is UNAUTHENTICATED, an unknown one refuses the connection', async () => {
      const anonymous = open(app.baseUrl, APPOINTMENT_SUBSCRIPTION, { providerReference: a.providerRef }, { field: 'appointmentChanged' });
      await anonymous.ended();
      expect(anonymous.errors[0].extensions.code).toBe('UNAUTHENTICATED');

      const wrong = open(app.baseUrl, APPOINTMENT_SUBSCRIPTION, { providerReference: a.providerRef }, {
        field: 'appointmentChanged',
        connectionParams: { 'X-SERVICE-CLIENT-ID': 'bk_wrong' },
      });
      await wrong.ended();
      expect(wrong.received).toEqual([]);
      expect(wrong.errors[0]).toMatchObject({ code: 4403 });
    });

    it('refuses another CRM’s provider (NOT_FOUND) and never delivers another CRM’s events', async () => {
      const foreign = open(app.baseUrl, APPOINTMENT_SUBSCRIPTION, { providerReference: a.providerRef }, { field: 'appointmentChanged', connectionParams: { 'X-SERVICE-CLIENT-ID': keyB } });
      await foreign.ended();
      expect(foreign.errors[0].extensions.code).toBe('NOT_FOUND');

      const mine = open(app.baseUrl, APPOINTMENT_SUBSCRIPTION, { providerReference: a.providerRef }, { field: 'appointmentChanged', connectionParams: { 'X-SERVICE-CLIENT-ID': keyA } });
      const theirs = open(app.baseUrl, APPOINTMENT_SUBSCRIPTION, { providerReference: b.providerRef }, { field: 'appointmentChanged', connectionParams: { 'X-SERVICE-CLIENT-ID': keyB } });
      await untilAppointmentsLive(mine, app, a.crmId, a.providerUuid);
      await untilAppointmentsLive(theirs, app, b.crmId, b.providerUuid);
      const after = { mine: mine.received.length, theirs: theirs.received.length };

      const held = await reserve(app.anonymous, a);
      expect(held.status).toBe(200);
      const appointmentUuid = held.body.participation.appointment_uuid;
      const added = await mine.waitFor((item) => item.change === 'PARTICIPATION_ADDED' && item.appointmentUuid === appointmentUuid, { after: after.mine });
      expect(added.item).toEqual({
        change: 'PARTICIPATION_ADDED',
        providerReference: a.providerRef,
        appointmentUuid,
        appointmentReference: expect.stringMatching(/^lot-/),
        appointmentState: 'ACTIVE',
        participationUuid: held.body.participation.uuid,
        participationReference: held.body.participation.uuid,
        state: 'RESERVED',
        previousState: null,
        at: expect.stringMatching(/Z$/),
      });

      const booked = await book(app.anonymous, a, { timeslot_uuid: appointmentUuid, placeholder_id: held.body.participation.customer_uuid });
      expect(booked.status).toBe(201);
      const changed = await mine.waitFor((item) => item.change === 'PARTICIPATION_STATE_CHANGED', { after: after.mine });
      expect(changed.item).toMatchObject({ participationUuid: held.body.participation.uuid, state: 'BOOKED', previousState: 'RESERVED' });

      const reference = added.item.appointmentReference;
      const cancel = await a.api.delete(`${providerPath(a)}/appointments`, { appointmentReference: reference });
      expect(cancel.status).toBeLessThan(300);
      const cancelled = await mine.waitFor((item) => item.change === 'APPOINTMENT_CANCELLED', { after: after.mine });
      expect(cancelled.item).toMatchObject({ appointmentUuid, appointmentReference: reference, appointmentState: 'CANCELLED', participationUuid: null });

      // CRM B heard none of it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(theirs.received.slice(after.theirs)).toEqual([]);
    });
  });
});
