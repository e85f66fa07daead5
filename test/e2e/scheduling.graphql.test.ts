import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ParticipationState } from '../../services/participations/participation.entity.js';
import { startTestApp, TEST_EPOCH, type TestApp } from '../support/harness.js';
import { apiClient, unique } from '../support/http.js';
import { createResource } from '../support/offerings-fixtures.js';
import {
  createCustomer,
  mailRowsOfAppointmentIds,
  mailRowsOfParticipation,
  RESOURCE_ADDRESS,
  reserveTimeslotSlot,
  setupScheduling,
  type SchedulingFixture,
  sql,
} from '../support/scheduling-fixtures.js';
import { REFUSED_TRANSITIONS, SPEC_TRANSITIONS } from '../support/spec-transitions.js';

const LOCATION = `address { __typename ... on Address { city zip street number countryCode } ... on TextLocation { text } }`;
const PARTICIPATION = `reference appointmentReference customerReference state name email mobile note messages`;
const APPOINTMENT = `uuid reference start end capacity acceptBookings resourceReference productReference productName contactReference ${LOCATION}
  participations { ${PARTICIPATION} } price { value currency } archived description notes seriesId state`;
const TIMESLOT = `uuid reference resourceReference start end raster defaultCapacity defaultAcceptBookings state ${LOCATION}`;
const CUSTOMER = `customerReference providerReference userName email mobile note language`;

const REFUSED = REFUSED_TRANSITIONS;

describe('scheduling: GraphQL', () => {
  let app: TestApp;
  let f: SchedulingFixture;

  beforeAll(async () => {
    app = await startTestApp({ clockAt: TEST_EPOCH });
    f = await setupScheduling(app);
  });
  afterAll(async () => app?.close());

  /** Runs an operation; returns data, or the first error's message and code. */
  async function gql(query: string, variables: Record<string, unknown> = {}, fixture: SchedulingFixture = f) {
    const res = await fixture.api.graphql(query, variables);
    expect(res.status).toBe(200);
    const error = res.body.errors?.[0];
    return { data: res.body.data as any, error: error ? { message: error.message as string, code: error.extensions?.code as string } : undefined };
  }

  const CREATE_TIMESLOTS = `mutation($p: String!, $t: [TimeslotInput!]!) { createTimeslots(providerReference: $p, timeslots: $t) { ${TIMESLOT} } }`;
  const CREATE_APPOINTMENT = `mutation($p: String!, $i: AppointmentInput!) { createAppointment(providerReference: $p, input: $i) { ${APPOINTMENT} } }`;
  const CREATE_SERIES = `mutation($p: String!, $i: AppointmentSeriesInput!) { createAppointmentSeries(providerReference: $p, input: $i) { seriesId appointments { ${APPOINTMENT} } } }`;
  const CREATE_PARTICIPATION = `mutation($p: String!, $i: ParticipationInput!, $ignoreCapacity: Boolean, $onDuplicateRaise: Boolean, $sendMails: Boolean) {
    createParticipation(providerReference: $p, input: $i, ignoreCapacity: $ignoreCapacity, onDuplicateRaise: $onDuplicateRaise, sendMails: $sendMails) { created participation { ${PARTICIPATION} } } }`;
  const UPDATE_STATE = `mutation($p: String!, $r: String!, $s: ParticipationState!, $m: String, $sendMails: Boolean) {
    updateParticipationState(providerReference: $p, reference: $r, state: $s, message: $m, sendMails: $sendMails) { ${PARTICIPATION} } }`;

  const timeslotInput = (overrides: Record<string, unknown> = {}) => ({
    reference: `timeslot-${unique()}@test`,
    resourceReference: f.resourceRef,
    start: '2027-03-01T08:00',
    end: '2027-03-01T12:00',
    raster: 30,
    defaultCapacity: 2,
    defaultAcceptBookings: true,
    state: 'BOOKABLE',
    ...overrides,
  });
  const appointmentInput = (overrides: Record<string, unknown> = {}) => ({
    reference: `appointment-${unique()}@test`,
    start: '2027-03-01T08:00',
    end: '2027-03-01T09:00',
    resourceReference: f.resourceRef,
    productReference: f.productRef,
    ...overrides,
  });
  const createAppointment = async (overrides: Record<string, unknown> = {}) => {
    const { data, error } = await gql(CREATE_APPOINTMENT, { p: f.providerRef, i: appointmentInput({ capacity: 50, ...overrides }) });
    expect(error).toBeUndefined();
    return data.createAppointment;
  };
  const createParticipation = async (appointmentReference: string, state: string, options: Record<string, unknown> = {}, customerReference?: string) => {
    const reference = `participation-${unique()}@test`;
    const result = await gql(CREATE_PARTICIPATION, {
      p: f.providerRef,
      i: { reference, appointmentReference, customerReference: customerReference ?? (await createCustomer(f)), state, ...(options.message ? { message: options.message } : {}) },
      ...options,
    });
    return { ...result, reference };
  };

  describe('timeslots', () => {
    it('createTimeslots: creates a batch in UTC with typed locations and generated references', async () => {
      const resourceRef = await createResource(f.api, f.crmId, f.providerRef, { products: [f.productRef] });
      const { data, error } = await gql(CREATE_TIMESLOTS, {
        p: f.providerRef,
        t: [
          timeslotInput({ resourceReference: resourceRef, reference: null, address: 'https://meet.example.com/x' }),
          timeslotInput({ resourceReference: resourceRef, start: '2027-03-02T08:00', end: '2027-03-02T10:00', state: 'CREATED', address: { city: 'Köln', zip: '50667', street: 'Dom', number: '1' } }),
        ],
      });
      expect(error).toBeUndefined();
      expect(data.createTimeslots.map((t: { state: string }) => t.state)).toEqual(['BOOKABLE', 'CREATED']);
      expect(data.createTimeslots[0]).toMatchObject({
        reference: expect.stringMatching(/^timeslot-/),
        start: '2027-03-01T07:00:00.000Z',
        end: '2027-03-01T11:00:00.000Z',
        address: { __typename: 'TextLocation', text: 'https://meet.example.com/x' },
      });
      expect(data.createTimeslots[1].address).toEqual({ __typename: 'Address', city: 'Köln', zip: '50667', street: 'Dom', number: '1', countryCode: 'DE' });
    });

    it('createTimeslots: one bad item stores nothing (VALIDATION_FAILED naming the field)', async () => {
      const resourceRef = await createResource(f.api, f.crmId, f.providerRef, { products: [f.productRef] });
      for (const bad of [{ raster: 0 }, { defaultCapacity: -1 }, { end: '2027-03-02T07:00' }, { resourceReference: 'nope' }]) {
        const { error } = await gql(CREATE_TIMESLOTS, {
          p: f.providerRef,
          t: [timeslotInput({ resourceReference: resourceRef }), timeslotInput({ resourceReference: resourceRef, start: '2027-03-02T08:00', end: '2027-03-02T10:00', ...bad })],
        });
        expect(error?.code).toBe('VALIDATION_FAILED');
        expect(error?.message).toMatch(/^timeslots\[1\]\./);
      }
      // A state outside TimeslotState is refused by GraphQL (400) before anything is stored.
      const badState = await f.api.graphql(CREATE_TIMESLOTS, { p: f.providerRef, t: [timeslotInput({ resourceReference: resourceRef, state: 'OPEN' })] });
      expect(badState.status).toBe(400);
      expect(badState.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
      expect(badState.body.errors![0].message).toContain('TimeslotState');
      const { data } = await gql(`query($p: String!, $r: String!) { timeslots(providerReference: $p, resourceReference: $r, from: "2027-01-01T00:00", to: "2028-01-01T00:00") { nodes { reference } } }`, {
        p: f.providerRef,
        r: resourceRef,
      });
      expect(data.timeslots.nodes).toEqual([]);
    });

    it('timeslots query: the range with appointment data; from and to are required; update and delete', async () => {
      const resourceRef = await createResource(f.api, f.crmId, f.providerRef, { products: [f.productRef], address: RESOURCE_ADDRESS });
      const input = timeslotInput({ resourceReference: resourceRef });
      const [created] = (await gql(CREATE_TIMESLOTS, { p: f.providerRef, t: [input] })).data.createTimeslots;
      const booked = await reserveTimeslotSlot(f, resourceRef, created.uuid, '2027-03-01T07:30:00.000Z', '2027-03-01T08:00:00.000Z');
      const QUERY = `query($p: String!, $r: String!, $from: String!, $to: String!) { timeslots(providerReference: $p, resourceReference: $r, from: $from, to: $to) { nodes { ${TIMESLOT} appointments { ${APPOINTMENT} } } } }`;
      const { data } = await gql(QUERY, { p: f.providerRef, r: resourceRef, from: '2027-03-01T00:00', to: '2027-03-02T00:00' });
      expect(data.timeslots.nodes).toHaveLength(1);
      expect(data.timeslots.nodes[0].appointments).toEqual([
        expect.objectContaining({ reference: booked.reference, start: '2027-03-01T07:30:00.000Z', capacity: 2, address: { __typename: 'Address', ...RESOURCE_ADDRESS } }),
      ]);
      expect((await gql(QUERY, { p: f.providerRef, r: resourceRef, from: '', to: '2027-03-02T00:00' })).error).toEqual({ code: 'VALIDATION_FAILED', message: 'query parameter from is required' });
      expect((await gql(QUERY, { p: f.providerRef, r: resourceRef, from: '2027-03-01T00:00', to: '' })).error?.code).toBe('VALIDATION_FAILED');
      // Leaving an argument out is a GraphQL validation error (HTTP 400), before any resolver runs.
      const missingTo = await f.api.graphql(`query { timeslots(providerReference: "x", resourceReference: "y", from: "2027-03-01T00:00") { nodes { reference } } }`);
      expect(missingTo.status).toBe(400);
      expect(missingTo.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');

      const UPDATE = `mutation($p: String!, $r: String!, $i: TimeslotUpdateInput!) { updateTimeslot(providerReference: $p, reference: $r, input: $i) { ${TIMESLOT} } }`;
      const updated = await gql(UPDATE, { p: f.providerRef, r: input.reference, i: { defaultCapacity: 4, address: 'Room 7' } });
      expect(updated.data.updateTimeslot).toMatchObject({ defaultCapacity: 4, raster: 30, start: '2027-03-01T07:00:00.000Z', state: 'BOOKABLE', address: { __typename: 'TextLocation', text: 'Room 7' } });
      expect((await gql(UPDATE, { p: f.providerRef, r: input.reference, i: { raster: 15 } })).error?.code).toBe('HAS_ACTIVE_APPOINTMENTS');

      const DELETE = `mutation($p: String!, $r: String!) { deleteTimeslot(providerReference: $p, reference: $r) }`;
      expect((await gql(DELETE, { p: f.providerRef, r: input.reference })).error?.code).toBe('HAS_ACTIVE_APPOINTMENTS');
      const CANCEL = `mutation($p: String!, $a: String!) { cancelAppointment(providerReference: $p, appointmentReference: $a) { state } }`;
      expect((await gql(CANCEL, { p: f.providerRef, a: booked.reference })).data.cancelAppointment.state).toBe('CANCELLED');
      expect((await gql(DELETE, { p: f.providerRef, r: input.reference })).data.deleteTimeslot).toBe(true);
      expect((await gql(DELETE, { p: f.providerRef, r: input.reference })).error?.code).toBe('NOT_FOUND');
    });
  });

  describe('appointments', () => {
    it('createAppointment: defaults, every field, errors with the REST codes', async () => {
      const input = appointmentInput();
      const { data } = await gql(CREATE_APPOINTMENT, { p: f.providerRef, i: input });
      expect(data.createAppointment).toEqual({
        uuid: expect.any(String),
        reference: input.reference,
        start: '2027-03-01T07:00:00.000Z',
        end: '2027-03-01T08:00:00.000Z',
        capacity: 0,
        acceptBookings: false,
        resourceReference: f.resourceRef,
        productReference: f.productRef,
        productName: 'Viewing',
        contactReference: null,
        address: { __typename: 'Address', ...RESOURCE_ADDRESS },
        participations: [],
        price: null,
        archived: false,
        description: null,
        notes: null,
        seriesId: null,
        state: 'ACTIVE',
      });
      const full = await gql(CREATE_APPOINTMENT, {
        p: f.providerRef,
        i: appointmentInput({ capacity: 3, acceptBookings: true, address: 'Zoom', price: { value: 20.5, currency: 'CHF' }, description: 'd', notes: 'n', productName: 'P' }),
      });
      expect(full.data.createAppointment).toMatchObject({ capacity: 3, acceptBookings: true, address: { __typename: 'TextLocation', text: 'Zoom' }, price: { value: 20.5, currency: 'CHF' }, productName: 'P' });

      expect((await gql(CREATE_APPOINTMENT, { p: f.providerRef, i: input })).error).toEqual({ code: 'CONFLICT', message: `Appointment reference ${input.reference} already exists` });
      // A currency outside the enum is refused by GraphQL itself: 400, nothing stored.
      const usd = appointmentInput({ price: { value: 1, currency: 'USD' } });
      const refused = await f.api.graphql(CREATE_APPOINTMENT, { p: f.providerRef, i: usd });
      expect(refused.status).toBe(400);
      expect(refused.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
      expect(refused.body.errors![0].message).toContain('Currency');
      expect(await sql(app, 'select id from appointment where reference = ?', [usd.reference])).toEqual([]);
      const eur = await gql(CREATE_APPOINTMENT, { p: f.providerRef, i: appointmentInput({ price: { value: 1, currency: 'EUR' } }) });
      expect(eur.data.createAppointment.price).toEqual({ value: 1, currency: 'EUR' });
      expect((await gql(CREATE_APPOINTMENT, { p: f.providerRef, i: appointmentInput({ resourceReference: 'nope' }) })).error?.code).toBe('VALIDATION_FAILED');
      expect((await gql(CREATE_APPOINTMENT, { p: f.providerRef, i: appointmentInput({ productReference: 'nope' }) })).error?.code).toBe('VALIDATION_FAILED');
      expect((await gql(CREATE_APPOINTMENT, { p: f.providerRef, i: appointmentInput({ end: '2027-03-01T07:00' }) })).error?.message).toBe('end must be after start');
      expect((await gql(CREATE_APPOINTMENT, { p: f.providerRef, i: appointmentInput({ reference: ' ' }) })).error?.message).toBe('reference must not be empty');
      const { reference: _omit, ...withoutReference } = appointmentInput();
      const missing = await f.api.graphql(CREATE_APPOINTMENT, { p: f.providerRef, i: withoutReference });
      expect(missing.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(missing.body.errors?.[0]?.message).toContain('reference');
    });

    it("reads wall-clock input in the provider's zone (America/New_York)", async () => {
      const ny = await setupScheduling(app, { timeZone: 'America/New_York' });
      const { data } = await gql(
        CREATE_APPOINTMENT,
        { p: ny.providerRef, i: { reference: `a-${unique()}`, start: '2027-03-01T08:00', end: '2027-03-01T09:00', resourceReference: ny.resourceRef, productReference: ny.productRef } },
        ny,
      );
      expect(data.createAppointment).toMatchObject({ start: '2027-03-01T13:00:00.000Z', end: '2027-03-01T14:00:00.000Z' });
    });

    it('createAppointmentSeries: shared seriesId, generated references, 09:00 kept across 2027-03-28, weekdays required for several days', async () => {
      const input = {
        from: '2027-03-26T09:00',
        to: '2027-03-26T10:00',
        resourceReference: f.resourceRef,
        productReference: f.productRef,
        capacity: 2,
        series_data: { from: '2027-03-26T00:00', to: '2027-03-31T00:00', raster: 60, weekdays: ['FRIDAY', 'MONDAY'] },
      };
      const { data, error } = await gql(CREATE_SERIES, { p: f.providerRef, i: input });
      expect(error).toBeUndefined();
      const { seriesId, appointments } = data.createAppointmentSeries;
      expect(appointments.map((a: { start: string }) => a.start)).toEqual(['2027-03-26T08:00:00.000Z', '2027-03-29T07:00:00.000Z']);
      expect(appointments.every((a: { seriesId: string; reference: string }) => a.seriesId === seriesId && a.reference.includes(seriesId))).toBe(true);
      const missing = await gql(CREATE_SERIES, { p: f.providerRef, i: { ...input, series_data: { ...input.series_data, weekdays: null } } });
      expect(missing.error).toEqual({ code: 'VALIDATION_FAILED', message: 'series_data.weekdays is required when the series spans more than one day' });
      // The REST spelling ("1") is not a Weekday: 400 before the service, no appointment created.
      // Counted for this provider only: other test files create series in the same database meanwhile.
      const seriesOfProvider = () => sql(app, 'select id from appointment where series_id is not null and provider_id = ?', [f.providerUuid]);
      const before = await seriesOfProvider();
      for (const weekdays of [['5'], ['FUNDAY']]) {
        const refused = await f.api.graphql(CREATE_SERIES, { p: f.providerRef, i: { ...input, series_data: { ...input.series_data, weekdays } } });
        expect(refused.status).toBe(400);
        expect(refused.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
        expect(refused.body.errors![0].message).toContain('Weekday');
      }
      expect(await seriesOfProvider()).toHaveLength(before.length);
      // Every name is the ISO weekday of the REST spelling: a week with all seven days has one appointment per day.
      const week = await gql(CREATE_SERIES, {
        p: f.providerRef,
        i: { ...input, series_data: { from: '2027-04-05T00:00', to: '2027-04-12T00:00', raster: 60, weekdays: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] } },
      });
      expect(week.error).toBeUndefined();
      expect(week.data.createAppointmentSeries.appointments).toHaveLength(7);
      const sundays = await gql(CREATE_SERIES, { p: f.providerRef, i: { ...input, series_data: { from: '2027-04-12T00:00', to: '2027-04-26T00:00', raster: 60, weekdays: ['SUNDAY'] } } });
      expect(sundays.data.createAppointmentSeries.appointments.map((a: { start: string }) => a.start)).toEqual(['2027-04-18T07:00:00.000Z', '2027-04-25T07:00:00.000Z']);
    });

    it('appointments query: filters by product, resource and archived', async () => {
      const g = await setupScheduling(app);
      const otherResource = await createResource(g.api, g.crmId, g.providerRef, { products: [g.productRef] });
      const make = async (resourceReference: string, start: string) =>
        (
          await gql(
            CREATE_APPOINTMENT,
            { p: g.providerRef, i: { reference: `a-${unique()}`, start, end: start.replace('T10', 'T11'), resourceReference, productReference: g.productRef } },
            g,
          )
        ).data.createAppointment.reference;
      const a = await make(g.resourceRef, '2027-04-01T10:00');
      const b = await make(otherResource, '2027-04-02T10:00');
      const QUERY = `query($p: String!, $product: String, $resource: String, $archived: Boolean) {
        appointments(providerReference: $p, productRef: $product, resourceRef: $resource, includeArchived: $archived) { nodes { reference archived state } } }`;
      expect((await gql(QUERY, { p: g.providerRef }, g)).data.appointments.nodes.map((x: { reference: string }) => x.reference)).toEqual([a, b]);
      expect((await gql(QUERY, { p: g.providerRef, resource: otherResource }, g)).data.appointments.nodes.map((x: { reference: string }) => x.reference)).toEqual([b]);
      expect((await gql(QUERY, { p: g.providerRef, product: g.productRef }, g)).data.appointments.nodes).toHaveLength(2);
      expect((await gql(QUERY, { p: g.providerRef, product: 'other' }, g)).data.appointments.nodes).toEqual([]);
      const DELETE_RESOURCE = `mutation($p: String!, $r: String!) { deleteResource(providerReference: $p, reference: $r, ignoreFutureAppointments: true) }`;
      expect((await gql(DELETE_RESOURCE, { p: g.providerRef, r: otherResource }, g)).data.deleteResource).toBe(true);
      expect((await gql(QUERY, { p: g.providerRef }, g)).data.appointments.nodes.map((x: { reference: string }) => x.reference)).toEqual([a]);
      expect((await gql(QUERY, { p: g.providerRef, archived: true }, g)).data.appointments.nodes).toEqual([
        { reference: a, archived: false, state: 'ACTIVE' },
        { reference: b, archived: true, state: 'CANCELLED' },
      ]);
    });

    it('deleteAppointmentsWithoutNotification by reference and by seriesId writes no mail; cancelAppointment mails every participant', async () => {
      const single = await createAppointment();
      await createParticipation(single.reference, 'BOOKED', { sendMails: false });
      const DELETE = `mutation($p: String!, $a: String, $s: String) { deleteAppointmentsWithoutNotification(providerReference: $p, appointmentReference: $a, seriesId: $s) }`;
      expect((await gql(DELETE, { p: f.providerRef, a: single.reference })).data.deleteAppointmentsWithoutNotification).toBe(1);
      const series = (
        await gql(CREATE_SERIES, {
          p: f.providerRef,
          i: { resourceReference: f.resourceRef, productReference: f.productRef, capacity: 3, series_data: { from: '2027-05-03T09:00', to: '2027-05-03T12:00', raster: 60 } },
        })
      ).data.createAppointmentSeries;
      await createParticipation(series.appointments[1].reference, 'BOOKED', { sendMails: false });
      expect((await gql(DELETE, { p: f.providerRef, s: series.seriesId })).data.deleteAppointmentsWithoutNotification).toBe(3);
      expect(await mailRowsOfAppointmentIds(app, [single.uuid, ...series.appointments.map((a: { uuid: string }) => a.uuid)])).toEqual([]);
      expect((await gql(DELETE, { p: f.providerRef })).error?.code).toBe('VALIDATION_FAILED');
      expect((await gql(DELETE, { p: f.providerRef, s: series.seriesId })).error?.code).toBe('NOT_FOUND');

      const cancelled = await createAppointment();
      await createParticipation(cancelled.reference, 'BOOKED', { sendMails: false });
      await createParticipation(cancelled.reference, 'REQUESTED', { sendMails: false });
      // Rule 4 cancels a DELETED participation too; DELETED -> CANCELED mails nobody.
      await createParticipation(cancelled.reference, 'DELETED', { sendMails: false });
      const CANCEL = `mutation($p: String!, $a: String!, $m: String) { cancelAppointment(providerReference: $p, appointmentReference: $a, message: $m) { state participations { state } } }`;
      const res = await gql(CANCEL, { p: f.providerRef, a: cancelled.reference, m: 'We are closed' });
      expect(res.data.cancelAppointment).toEqual({ state: 'CANCELLED', participations: [{ state: 'CANCELED' }, { state: 'CANCELED' }, { state: 'CANCELED' }] });
      const mails = await mailRowsOfAppointmentIds(app, [cancelled.uuid]);
      expect(mails.map((m) => [m.payload.template, m.payload.message])).toEqual([
        ['appointment-cancelled', 'We are closed'],
        ['appointment-cancelled', 'We are closed'],
      ]);
      await gql(CANCEL, { p: f.providerRef, a: cancelled.reference, m: 'again' });
      expect(await mailRowsOfAppointmentIds(app, [cancelled.uuid])).toHaveLength(2);
    });
  });

  describe('participations', () => {
    it('createParticipation: created flag, sendMails, onDuplicateRaise, capacity and ignoreCapacity', async () => {
      const small = await createAppointment({ capacity: 1 });
      const customerReference = await createCustomer(f, { userName: 'Gina Graph', email: 'gina@example.com' });
      const first = await createParticipation(small.reference, 'BOOKED', { sendMails: false }, customerReference);
      expect(first.data.createParticipation).toEqual({
        created: true,
        participation: {
          reference: first.reference,
          appointmentReference: small.reference,
          customerReference,
          state: 'BOOKED',
          name: 'Gina Graph',
          email: 'gina@example.com',
          mobile: null,
          note: null,
          messages: null,
        },
      });
      expect(await mailRowsOfParticipation(app, f.crmId, first.reference)).toEqual([]);
      const full = await createParticipation(small.reference, 'BOOKED');
      expect(full.error?.code).toBe('CAPACITY_EXHAUSTED');
      const forced = await createParticipation(small.reference, 'BOOKED', { ignoreCapacity: true, message: 'squeezed in' });
      expect(forced.data.createParticipation.created).toBe(true);
      expect((await mailRowsOfParticipation(app, f.crmId, forced.reference)).map((m) => [m.payload.template, m.payload.message])).toEqual([
        ['participation-booked', 'squeezed in'],
      ]);

      const duplicate = { p: f.providerRef, i: { reference: first.reference, appointmentReference: small.reference, customerReference, state: 'CANCELED' } };
      expect((await gql(CREATE_PARTICIPATION, { ...duplicate, onDuplicateRaise: true })).error?.code).toBe('CONFLICT');
      const updated = await gql(CREATE_PARTICIPATION, { ...duplicate, sendMails: false });
      expect(updated.data.createParticipation).toMatchObject({ created: false, participation: { state: 'CANCELED' } });
    });

    it('never overfills under 30 concurrent createParticipation mutations (capacity 5)', async () => {
      const appointment = await createAppointment({ capacity: 5 });
      const customers = await Promise.all(Array.from({ length: 30 }, () => createCustomer(f)));
      const results = await Promise.all(
        customers.map((customerReference) =>
          f.api.graphql(CREATE_PARTICIPATION, {
            p: f.providerRef,
            i: { reference: `race-${unique()}`, appointmentReference: appointment.reference, customerReference, state: 'BOOKED' },
            sendMails: false,
          }),
        ),
      );
      const codes = results.map((r) => r.body.errors?.[0]?.extensions?.code ?? 'OK');
      expect(codes.filter((c) => c === 'OK')).toHaveLength(5);
      expect(codes.filter((c) => c === 'CAPACITY_EXHAUSTED')).toHaveLength(25);
      expect(await sql(app, 'select id from participation where appointment_id = ?', [appointment.uuid])).toHaveLength(5);
    });

    describe('updateParticipationState: the transition table', () => {
      let roomy: { reference: string };
      beforeAll(async () => {
        roomy = await createAppointment({ capacity: 500 });
      });
      const participationIn = async (state: ParticipationState) => {
        const created = await createParticipation(roomy.reference, state, { sendMails: false });
        expect(created.error).toBeUndefined();
        return created.reference;
      };

      it.each(SPEC_TRANSITIONS)('%s -> %s is allowed; e-mail: %s (and none with sendMails=false)', async (from, to, mails) => {
        const reference = await participationIn(from);
        const { data } = await gql(UPDATE_STATE, { p: f.providerRef, r: reference, s: to, m: 'note' });
        expect(data.updateParticipationState).toMatchObject({ reference, state: to, messages: ['note'] });
        expect(await mailRowsOfParticipation(app, f.crmId, reference)).toHaveLength(mails ? 1 : 0);
        const quiet = await participationIn(from);
        expect((await gql(UPDATE_STATE, { p: f.providerRef, r: quiet, s: to, sendMails: false })).data.updateParticipationState.state).toBe(to);
        expect(await mailRowsOfParticipation(app, f.crmId, quiet)).toEqual([]);
      });

      it.each(REFUSED)('%s -> %s is refused with TRANSITION_NOT_ALLOWED naming both states', async (from, to) => {
        const reference = await participationIn(from);
        const { error } = await gql(UPDATE_STATE, { p: f.providerRef, r: reference, s: to });
        expect(error?.code).toBe('TRANSITION_NOT_ALLOWED');
        expect(error?.message).toContain(`from ${from} to ${to}`);
      });

      it('unknown state: 400 from GraphQL, the participation unchanged; unknown participation: NOT_FOUND', async () => {
        const reference = await participationIn('BOOKED');
        for (const state of ['DONE', 'booked']) {
          const refused = await f.api.graphql(UPDATE_STATE, { p: f.providerRef, r: reference, s: state });
          expect(refused.status).toBe(400);
          expect(refused.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
          expect(refused.body.errors![0].message).toContain('ParticipationState');
        }
        const inline = await f.api.graphql(`mutation { updateParticipationState(providerReference: "${f.providerRef}", reference: "${reference}", state: "CANCELED") { state } }`);
        expect(inline.status).toBe(400);
        expect(inline.body.errors![0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
        expect(await sql(app, 'select state from participation where reference = ?', [reference])).toEqual([{ state: 'BOOKED' }]);
        expect((await gql(UPDATE_STATE, { p: f.providerRef, r: 'nope', s: 'CANCELED' })).error?.code).toBe('NOT_FOUND');
      });
    });
  });

  describe('customers', () => {
    const QUERY = `query($p: String!, $r: String!) { customer(providerReference: $p, reference: $r) { ${CUSTOMER} } }`;
    const CREATE = `mutation($p: String!, $i: CustomerInput!) { createCustomer(providerReference: $p, input: $i) { created customer { ${CUSTOMER} } } }`;
    const UPDATE = `mutation($p: String!, $r: String!, $i: CustomerUpdateInput!) { updateCustomer(providerReference: $p, reference: $r, input: $i) { ${CUSTOMER} } }`;
    const DELETE = `mutation($p: String!, $r: String!, $ignore: Boolean) { deleteCustomer(providerReference: $p, reference: $r, ignoreFutureAppointments: $ignore) }`;

    it('customer is null when unknown; create, create again, update, delete', async () => {
      expect((await gql(QUERY, { p: f.providerRef, r: 'nobody' })).data).toEqual({ customer: null });
      const input = { customerReference: `c-${unique()}`, providerReference: f.providerRef, userName: 'Hanna Graph', email: 'hanna@example.com', mobile: '+43 660 1234567' };
      const created = await gql(CREATE, { p: f.providerRef, i: input });
      expect(created.data.createCustomer).toEqual({
        created: true,
        customer: { customerReference: input.customerReference, providerReference: f.providerRef, userName: 'Hanna Graph', email: 'hanna@example.com', mobile: '+43 660 1234567', note: null, language: null },
      });
      expect((await gql(CREATE, { p: f.providerRef, i: { ...input, userName: 'Other' } })).data.createCustomer).toMatchObject({ created: false, customer: { userName: 'Hanna Graph' } });
      expect((await gql(QUERY, { p: f.providerRef, r: input.customerReference })).data.customer.userName).toBe('Hanna Graph');

      for (const [change, message] of [
        [{ customerReference: null }, 'customerReference is required'],
        [{ customerReference: '' }, 'customerReference must not be empty'],
        [{ userName: null }, 'userName is required'],
        [{ note: 'x'.repeat(1024) }, 'note must be at most 1023 characters'],
        [{ mobile: '0660 1234567' }, 'mobile must be a phone number with international prefix'],
      ] as const) {
        const { error } = await gql(UPDATE, { p: f.providerRef, r: input.customerReference, i: change });
        expect(error?.code).toBe('VALIDATION_FAILED');
        expect(error?.message).toContain(message);
      }
      const renamed = `renamed-${unique()}`;
      const updated = await gql(UPDATE, { p: f.providerRef, r: input.customerReference, i: { customerReference: renamed, note: 'n' } });
      expect(updated.data.updateCustomer).toMatchObject({ customerReference: renamed, userName: 'Hanna Graph', note: 'n', mobile: '+43 660 1234567' });

      const appointment = await createAppointment();
      await createParticipation(appointment.reference, 'BOOKED', { sendMails: false }, renamed);
      expect((await gql(DELETE, { p: f.providerRef, r: renamed })).error?.code).toBe('HAS_FUTURE_APPOINTMENTS');
      expect((await gql(DELETE, { p: f.providerRef, r: renamed, ignore: true })).data.deleteCustomer).toBe(true);
      expect((await gql(QUERY, { p: f.providerRef, r: renamed })).data.customer).toBeNull();
      const rows = await mailRowsOfAppointmentIds(app, [appointment.uuid]);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.payload.template).toBe('participation-canceled');
    });
  });

  it("gives another CRM NOT_FOUND for this CRM's provider data (customer: null)", async () => {
    const other = await app.newCrm();
    const client = apiClient(app.baseUrl, other.key);
    const operations: [string, Record<string, unknown>][] = [
      [`query($p: String!) { appointments(providerReference: $p) { nodes { reference } } }`, { p: f.providerRef }],
      [`query($p: String!, $r: String!) { timeslots(providerReference: $p, resourceReference: $r, from: "2027-01-01T00:00", to: "2027-02-01T00:00") { nodes { reference } } }`, { p: f.providerRef, r: f.resourceRef }],
      [CREATE_APPOINTMENT, { p: f.providerRef, i: appointmentInput() }],
      [CREATE_TIMESLOTS, { p: f.providerRef, t: [timeslotInput()] }],
    ];
    for (const [query, variables] of operations) {
      const res = await client.graphql(query, variables);
      expect(res.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
    const customer = await client.graphql(`query($p: String!) { customer(providerReference: $p, reference: "x") { userName } }`, { p: f.providerRef });
    expect(customer.body).toEqual({ data: { customer: null } });
    // Without a key nothing is answered.
    const anonymous = await app.anonymous.graphql(`query($p: String!) { appointments(providerReference: $p) { nodes { reference } } }`, { p: f.providerRef });
    expect(anonymous.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
