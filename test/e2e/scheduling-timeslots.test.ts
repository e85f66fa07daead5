import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_EPOCH, type TestApp } from '../support/harness.js';
import { unique } from '../support/http.js';
import { createResource, enc } from '../support/offerings-fixtures.js';
import { addParticipation, reserveTimeslotSlot, RESOURCE_ADDRESS, setupScheduling, type SchedulingFixture } from '../support/scheduling-fixtures.js';

const API_INFO = { version: '1' };

describe('scheduling: timeslots (REST)', () => {
  let app: TestApp;
  let f: SchedulingFixture;

  beforeAll(async () => {
    app = await startTestApp({ clockAt: TEST_EPOCH });
    f = await setupScheduling(app);
  });
  afterAll(async () => app?.close());

  const timeslot = (overrides: Record<string, unknown> = {}) => ({
    reference: `timeslot-${unique()}@test`,
    resourceReference: f.resourceRef,
    start: '2027-03-01T08:00',
    end: '2027-03-01T18:00',
    raster: 30,
    defaultCapacity: 3,
    defaultAcceptBookings: true,
    state: 'BOOKABLE',
    ...overrides,
  });
  const listPath = (resourceRef: string, query: string) => `${f.base}/resource/${enc(resourceRef)}/timeslots${query}`;

  /** A resource of its own, so timeslots of one test never overlap another's. */
  const freshResource = () => createResource(f.api, f.crmId, f.providerRef, { products: [f.productRef], address: RESOURCE_ADDRESS });

  /** Creates timeslots and returns them as the create response shows them. */
  async function createTimeslots(...items: Record<string, unknown>[]): Promise<any[]> {
    const res = await f.api.post(`${f.base}/timeslots`, { timeslots: items });
    expect(res.status).toBe(201);
    return res.body.timeslots;
  }

  describe('create', () => {
    it('creates a batch with 201 and answers the wrapped timeslots in UTC', async () => {
      const resourceRef = await freshResource();
      const first = timeslot({ resourceReference: resourceRef, address: 'https://meet.example.com/room' });
      const second = timeslot({
        resourceReference: resourceRef,
        start: '2027-03-02T08:00',
        end: '2027-03-02T12:00',
        raster: 60,
        defaultCapacity: 1,
        defaultAcceptBookings: false,
        state: 'CREATED',
        address: { city: 'Potsdam', zip: '14467', street: 'Am Kanal', number: '5', country: 'de' },
      });
      const res = await f.api.post(`${f.base}/timeslots`, { timeslots: [first, second] });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        'api-info': API_INFO,
        timeslots: [
          {
            uuid: expect.any(String),
            reference: first.reference,
            resourceReference: resourceRef,
            start: '2027-03-01T07:00:00Z',
            end: '2027-03-01T17:00:00Z',
            raster: 30,
            defaultCapacity: 3,
            defaultAcceptBookings: true,
            address: 'https://meet.example.com/room',
            state: 'BOOKABLE',
          },
          {
            uuid: expect.any(String),
            reference: second.reference,
            resourceReference: resourceRef,
            start: '2027-03-02T07:00:00Z',
            end: '2027-03-02T11:00:00Z',
            raster: 60,
            defaultCapacity: 1,
            defaultAcceptBookings: false,
            address: { city: 'Potsdam', zip: '14467', street: 'Am Kanal', number: '5', countryCode: 'DE' },
            state: 'CREATED',
          },
        ],
      });
    });

    it('generates a reference when it is omitted', async () => {
      const { reference: _omit, ...withoutReference } = timeslot({ resourceReference: await freshResource() });
      const res = await f.api.post(`${f.base}/timeslots`, { timeslots: [withoutReference, { ...withoutReference, reference: null, start: '2027-03-03T08:00', end: '2027-03-03T09:00' }] });
      expect(res.status).toBe(201);
      const [a, b] = res.body.timeslots;
      expect(a.reference).toMatch(/^timeslot-[0-9a-f-]{36}$/);
      expect(b.reference).toMatch(/^timeslot-[0-9a-f-]{36}$/);
      expect(a.reference).not.toBe(b.reference);
    });

    it.each([
      ['end before start', { start: '2027-03-01T10:00', end: '2027-03-01T09:00' }, 'timeslots[1].end must be after start'],
      ['end equal to start', { start: '2027-03-01T10:00', end: '2027-03-01T10:00' }, 'timeslots[1].end must be after start'],
      ['raster 0', { raster: 0 }, 'timeslots[1].raster must be greater than 0'],
      ['negative raster', { raster: -30 }, 'timeslots[1].raster must be greater than 0'],
      ['raster not whole', { raster: 7.5 }, 'timeslots[1].raster must be a whole number'],
      ['defaultCapacity 0', { defaultCapacity: 0 }, 'timeslots[1].defaultCapacity must be greater than 0'],
      ['negative defaultCapacity', { defaultCapacity: -1 }, 'timeslots[1].defaultCapacity must be greater than 0'],
      ['unknown resource', { resourceReference: 'no-such-resource' }, 'timeslots[1].resourceReference: no resource no-such-resource'],
      ['unknown state', { state: 'OPEN' }, 'timeslots[1].state must be one of CREATED, BOOKABLE'],
      ['bad date-time', { end: 'tomorrow' }, 'timeslots[1].end must be an ISO 8601 date-time'],
      ['bad address', { address: { city: 'Berlin' } }, 'timeslots[1].address'],
    ])('refuses the whole batch (400) when one item has %s; nothing is stored', async (_name, bad, message) => {
      const resourceRef = await freshResource();
      const good = timeslot({ resourceReference: resourceRef, start: '2027-04-01T08:00', end: '2027-04-01T09:00' });
      const res = await f.api.post(`${f.base}/timeslots`, {
        timeslots: [good, timeslot({ resourceReference: resourceRef, start: '2027-04-02T08:00', end: '2027-04-02T09:00', ...bad })],
      });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].errorCode).toBe('VALIDATION_FAILED');
      expect(res.body.errors[0].message).toContain(message);
      const list = await f.api.get(listPath(resourceRef, '?from=2027-01-01T00:00&to=2028-01-01T00:00'));
      expect(list.body).toEqual([]);
      // The good item's reference is still free.
      expect((await f.api.post(`${f.base}/timeslots`, { timeslots: [good] })).status).toBe(201);
    });

    it.each(['resourceReference', 'end', 'raster', 'defaultCapacity', 'defaultAcceptBookings', 'state'])('names the missing required field %s (400)', async (field) => {
      const item: Record<string, unknown> = timeslot();
      delete item[field];
      const res = await f.api.post(`${f.base}/timeslots`, { timeslots: [item] });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toBe(`timeslots[0].${field} is required`);
    });

    it('requires the timeslots array (400)', async () => {
      expect((await f.api.post(`${f.base}/timeslots`, {})).body.errors[0].message).toBe('timeslots is required');
      expect((await f.api.post(`${f.base}/timeslots`, { timeslots: [] })).body.errors[0].message).toContain('at least 1');
    });

    it('refuses a batch that reuses a reference (409) and one that overlaps a timeslot of the same resource (409)', async () => {
      const resourceRef = await freshResource();
      const first = timeslot({ resourceReference: resourceRef });
      expect((await f.api.post(`${f.base}/timeslots`, { timeslots: [first] })).status).toBe(201);
      const again = await f.api.post(`${f.base}/timeslots`, { timeslots: [timeslot({ reference: first.reference, resourceReference: resourceRef, start: '2027-05-01T08:00', end: '2027-05-01T09:00' })] });
      expect(again.status).toBe(409);
      expect(again.body.errors[0].message).toContain('already exists');
      const overlap = await f.api.post(`${f.base}/timeslots`, { timeslots: [timeslot({ resourceReference: resourceRef, start: '2027-03-01T17:00', end: '2027-03-01T19:00' })] });
      expect(overlap.status).toBe(409);
      expect(overlap.body.errors[0].message).toContain('overlaps');
      // Touching (end = start) is no overlap.
      const touching = await f.api.post(`${f.base}/timeslots`, { timeslots: [timeslot({ resourceReference: resourceRef, start: '2027-03-01T18:00', end: '2027-03-01T19:00' })] });
      expect(touching.status).toBe(201);
    });

    it('reads input with an offset as that instant', async () => {
      const res = await f.api.post(`${f.base}/timeslots`, {
        timeslots: [timeslot({ resourceReference: await freshResource(), start: '2027-03-01T08:00:00+01:00', end: '2027-03-01T10:00:00Z' })],
      });
      expect(res.status).toBe(201);
      expect(res.body.timeslots[0]).toMatchObject({ start: '2027-03-01T07:00:00Z', end: '2027-03-01T10:00:00Z' });
    });

    it("reads wall-clock input in the provider's zone (America/New_York)", async () => {
      const ny = await setupScheduling(app, { timeZone: 'America/New_York' });
      const res = await ny.api.post(`${ny.base}/timeslots`, {
        timeslots: [{ resourceReference: ny.resourceRef, start: '2027-03-01T08:00', end: '2027-03-01T12:00', raster: 60, defaultCapacity: 1, defaultAcceptBookings: true, state: 'BOOKABLE' }],
      });
      expect(res.status).toBe(201);
      expect(res.body.timeslots[0]).toMatchObject({ start: '2027-03-01T13:00:00Z', end: '2027-03-01T17:00:00Z' });
      // Summer time in New York starts 2027-03-14: 08:00 EDT is 12:00Z.
      const summer = await ny.api.post(`${ny.base}/timeslots`, {
        timeslots: [{ resourceReference: ny.resourceRef, start: '2027-03-15T08:00', end: '2027-03-15T09:00', raster: 60, defaultCapacity: 1, defaultAcceptBookings: true, state: 'BOOKABLE' }],
      });
      expect(summer.body.timeslots[0]).toMatchObject({ start: '2027-03-15T12:00:00Z', end: '2027-03-15T13:00:00Z' });
    });
  });

  describe('get by resource', () => {
    it('requires from and to (400 each)', async () => {
      const noFrom = await f.api.get(listPath(f.resourceRef, '?to=2027-03-02T00:00'));
      expect(noFrom.status).toBe(400);
      expect(noFrom.body.errors[0].message).toBe('query parameter from is required');
      const noTo = await f.api.get(listPath(f.resourceRef, '?from=2027-03-01T00:00'));
      expect(noTo.status).toBe(400);
      expect(noTo.body.errors[0].message).toBe('query parameter to is required');
      expect((await f.api.get(listPath(f.resourceRef, ''))).status).toBe(400);
      const bad = await f.api.get(listPath(f.resourceRef, '?from=yesterday&to=2027-03-02T00:00'));
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0].message).toContain('from must be an ISO 8601 date-time');
      const reversed = await f.api.get(listPath(f.resourceRef, '?from=2027-03-02T00:00&to=2027-03-01T00:00'));
      expect(reversed.status).toBe(400);
    });

    it('answers 404 for an unknown resource', async () => {
      expect((await f.api.get(listPath('no-such-resource', '?from=2027-03-01T00:00&to=2027-03-02T00:00'))).status).toBe(404);
    });

    it('lists the timeslots overlapping the period (plain array, UTC) with the appointments made from them', async () => {
      const resourceRef = await freshResource();
      const a = timeslot({ resourceReference: resourceRef, start: '2027-06-01T08:00', end: '2027-06-01T12:00', raster: 60 });
      const b = timeslot({ resourceReference: resourceRef, start: '2027-06-02T08:00', end: '2027-06-02T12:00' });
      const c = timeslot({ resourceReference: resourceRef, start: '2027-06-03T08:00', end: '2027-06-03T12:00' });
      const [createdA] = await createTimeslots(a, b, c);
      // The first booking of a slot (booking flow) makes an appointment from the timeslot.
      const booked = await reserveTimeslotSlot(f, resourceRef, createdA.uuid, '2027-06-01T07:00:00Z', '2027-06-01T08:00:00Z');
      expect(booked).toBeDefined();
      // The CRM adds a participant of its own to that appointment.
      expect((await addParticipation(f, booked.reference, { state: 'BOOKED', query: 'sendMails=false' })).res.status).toBe(201);

      // from/to: 2027-06-01T10:00 Berlin .. 2027-06-02T09:00 Berlin touches a and b, not c.
      const res = await f.api.get(listPath(resourceRef, '?from=2027-06-01T10:00&to=2027-06-02T09:00'));
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.body.map((t: { reference: string }) => t.reference)).toEqual([a.reference, b.reference]);
      const [first, second] = res.body;
      expect(first).toMatchObject({ reference: a.reference, start: '2027-06-01T06:00:00Z', end: '2027-06-01T10:00:00Z', raster: 60, state: 'BOOKABLE' });
      expect(first.appointments).toHaveLength(1);
      expect(first.appointments[0]).toMatchObject({
        reference: booked.reference,
        start: '2027-06-01T07:00:00Z',
        end: '2027-06-01T08:00:00Z',
        capacity: 3,
        state: 'ACTIVE',
        resourceReference: resourceRef,
        acceptBookings: true,
        address: RESOURCE_ADDRESS,
        participations: [expect.objectContaining({ state: 'RESERVED', name: null }), expect.objectContaining({ state: 'BOOKED', name: 'Carla Customer' })],
      });
      expect(second.appointments).toEqual([]);
      // Shown as the provider's appointment listing shows it.
      const listed = (await f.api.get(`${f.base}/appointments?resourceRef=${enc(resourceRef)}`)).body;
      expect(first.appointments).toEqual(listed.filter((x: { reference: string }) => x.reference === booked.reference));
    });

    it('shows the CRM’s own appointments of the resource with every timeslot they overlap', async () => {
      const resourceRef = await freshResource();
      const a = timeslot({ resourceReference: resourceRef, start: '2027-06-08T08:00', end: '2027-06-08T12:00' });
      const b = timeslot({ resourceReference: resourceRef, start: '2027-06-08T12:00', end: '2027-06-08T16:00' });
      await createTimeslots(a, b);
      const appointment = async (start: string, end: string) => {
        const reference = `crm-${unique()}@test`;
        const res = await f.api.post(`${f.base}/appointments`, { reference, start, end, resourceReference: resourceRef, productReference: f.productRef, capacity: 2 });
        expect(res.status, res.text).toBe(201);
        return reference;
      };
      const inA = await appointment('2027-06-08T09:00', '2027-06-08T10:00');
      const across = await appointment('2027-06-08T11:30', '2027-06-08T12:30');
      await appointment('2027-06-08T17:00', '2027-06-08T18:00');
      const res = await f.api.get(listPath(resourceRef, '?from=2027-06-08T00:00&to=2027-06-09T00:00'));
      expect(res.status).toBe(200);
      const references = (t: { appointments: { reference: string }[] }) => t.appointments.map((x) => x.reference);
      expect(res.body.map(references)).toEqual([[inA, across], [across]]);
      expect(res.body[0].appointments[0]).toMatchObject({ reference: inA, start: '2027-06-08T07:00:00Z', end: '2027-06-08T08:00:00Z', capacity: 2, state: 'ACTIVE' });
    });
  });

  describe('update', () => {
    it('changes only the supplied fields (200, wrapped)', async () => {
      const resourceRef = await freshResource();
      const original = timeslot({ resourceReference: resourceRef, address: 'Room 1' });
      expect((await f.api.post(`${f.base}/timeslots`, { timeslots: [original] })).status).toBe(201);
      const res = await f.api.put(`${f.base}/timeslots/${enc(original.reference)}`, { defaultCapacity: 8, state: 'CREATED' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        'api-info': API_INFO,
        timeslot: {
          uuid: expect.any(String),
          reference: original.reference,
          resourceReference: resourceRef,
          start: '2027-03-01T07:00:00Z',
          end: '2027-03-01T17:00:00Z',
          raster: 30,
          defaultCapacity: 8,
          defaultAcceptBookings: true,
          address: 'Room 1',
          state: 'CREATED',
        },
      });
      const moved = await f.api.put(`${f.base}/timeslots/${enc(original.reference)}`, { end: '2027-03-01T20:00', raster: 15, address: null });
      expect(moved.status).toBe(200);
      expect(moved.body.timeslot).toMatchObject({ start: '2027-03-01T07:00:00Z', end: '2027-03-01T19:00:00Z', raster: 15, defaultCapacity: 8, address: null, state: 'CREATED' });
      const address = await f.api.put(`${f.base}/timeslots/${enc(original.reference)}`, { address: RESOURCE_ADDRESS });
      expect(address.body.timeslot.address).toEqual(RESOURCE_ADDRESS);
    });

    it('validates like create (400) and answers 404 for an unknown reference', async () => {
      const original = timeslot({ resourceReference: await freshResource() });
      await f.api.post(`${f.base}/timeslots`, { timeslots: [original] });
      const path = `${f.base}/timeslots/${enc(original.reference)}`;
      expect((await f.api.put(path, { end: '2027-03-01T07:00' })).body.errors[0].message).toBe('end must be after start');
      expect((await f.api.put(path, { raster: 0 })).body.errors[0].message).toBe('raster must be greater than 0');
      expect((await f.api.put(path, { defaultCapacity: -2 })).status).toBe(400);
      expect((await f.api.put(path, { state: 'DONE' })).status).toBe(400);
      expect((await f.api.put(`${f.base}/timeslots/no-such-timeslot`, { raster: 10 })).status).toBe(404);
    });

    it('refuses (409) to move the grid of a timeslot that has an active appointment', async () => {
      const resourceRef = await freshResource();
      const original = timeslot({ resourceReference: resourceRef });
      const [created] = await createTimeslots(original);
      await reserveTimeslotSlot(f, resourceRef, created.uuid, '2027-03-01T07:00:00Z', '2027-03-01T07:30:00Z');
      const path = `${f.base}/timeslots/${enc(original.reference)}`;
      const res = await f.api.put(path, { raster: 60 });
      expect(res.status).toBe(409);
      expect(res.body.errors[0].errorCode).toBe('HAS_ACTIVE_APPOINTMENTS');
      // Fields that leave the grid alone may change.
      expect((await f.api.put(path, { defaultCapacity: 10, state: 'CREATED' })).status).toBe(200);
    });
  });

  describe('delete', () => {
    it('deletes a timeslot without appointments (204, empty body)', async () => {
      const resourceRef = await freshResource();
      const original = timeslot({ resourceReference: resourceRef });
      await f.api.post(`${f.base}/timeslots`, { timeslots: [original] });
      const res = await f.api.delete(`${f.base}/timeslots/${enc(original.reference)}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect((await f.api.get(listPath(resourceRef, '?from=2027-01-01T00:00&to=2028-01-01T00:00'))).body).toEqual([]);
      expect((await f.api.delete(`${f.base}/timeslots/${enc(original.reference)}`)).status).toBe(404);
    });

    it('is refused (409) while an appointment that is not cancelled exists, and allowed after the cancel', async () => {
      const resourceRef = await freshResource();
      const original = timeslot({ resourceReference: resourceRef });
      const [created] = await createTimeslots(original);
      const appointment = await reserveTimeslotSlot(f, resourceRef, created.uuid, '2027-03-01T08:00:00Z', '2027-03-01T08:30:00Z');
      const path = `${f.base}/timeslots/${enc(original.reference)}`;
      const refused = await f.api.delete(path);
      expect(refused.status).toBe(409);
      expect(refused.body.errors[0]).toEqual({ errorCode: 'HAS_ACTIVE_APPOINTMENTS', message: expect.stringContaining('not cancelled') });
      const cancel = await f.api.delete(`${f.base}/appointments`, { appointmentReference: appointment.reference });
      expect(cancel.status).toBe(200);
      expect((await f.api.delete(path)).status).toBe(204);
    });
  });

  it("gives another CRM 404 for this CRM's provider and timeslots", async () => {
    const original = timeslot();
    expect((await f.api.post(`${f.base}/timeslots`, { timeslots: [timeslot({ resourceReference: await freshResource(), reference: original.reference })] })).status).toBe(201);
    const { crmId, api } = await app.newCrm();
    const other = `/crms/${crmId}/provider/${enc(f.providerRef)}`;
    expect((await api.post(`${other}/timeslots`, { timeslots: [original] })).status).toBe(404);
    expect((await api.get(`${other}/resource/${enc(f.resourceRef)}/timeslots?from=2027-03-01T00:00&to=2027-03-02T00:00`)).status).toBe(404);
    expect((await api.put(`${other}/timeslots/${enc(original.reference)}`, { raster: 10 })).status).toBe(404);
    expect((await api.delete(`${other}/timeslots/${enc(original.reference)}`)).status).toBe(404);
  });
});
