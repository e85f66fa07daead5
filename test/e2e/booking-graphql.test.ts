import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setupBookable } from '../support/booking-fixtures.js';
import { addProduct, bookablesOf, participationsOf, resourceRefs, updateResource, upcoming } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { type ApiClient, unique } from '../support/http.js';

const BOOKABLE_FIELDS = `start end formattedStart formattedEnd timeslotUuid appointmentUuid productUuid resourceUuid productName resourceName
  contactChannel { type value } capacity capacityLeft products { uuid name } kind`;
/** REST kind → GraphQL BookableKind. */
const KIND: Record<string, string> = { 'models.Bookable': 'BOOKABLE', 'models.LotAppointment': 'LOT_APPOINTMENT' };
const UPCOMING = `query ($ref: String!, $refs: [String!], $groupFormat: String, $timeFormat: String, $languageTag: String, $channelKey: ChannelKey, $prdRef: String) {
  upcomingBookables(ref: $ref, refs: $refs, groupFormat: $groupFormat, timeFormat: $timeFormat, languageTag: $languageTag, channelKey: $channelKey, prdRef: $prdRef) {
    publicVisible groups { key bookables { ${BOOKABLE_FIELDS} } }
  }
}`;
const RESERVE = `mutation ($ref: String!, $input: ReserveAppointmentInput!, $channelKey: ChannelKey) {
  reserveAppointment(ref: $ref, input: $input, channelKey: $channelKey) {
    participation { uuid appointmentUuid timeslotUuid resourceUuid productUuid from to appointmentCapacity appointmentCapacityLeft customerUuid
      customerMobile customerFullName customerEmail customerNote state formatedAddress messages }
    appointments { uuid kind productId productName resourceId from to state capacity capacityLeft customers { customerPlaceholderId customerUuid participationState participationId } }
  }
}`;
const CREATE = `mutation ($ref: String!, $input: ConsumerBookingInput!, $timeFormat: String) {
  createAppointmentWithConsumer(ref: $ref, input: $input, timeFormat: $timeFormat) {
    appointmentUuid start end formattedStart formattedEnd timeslotUuid productUuid resourceUuid contactChannel { type value } productName resourceName
    capacity capacityLeft products { uuid name } kind cancelLink
  }
}`;

describe('booking flow: GraphQL', () => {
  let app: TestApp;
  let pub: ApiClient;

  beforeAll(async () => {
    app = await startTestApp();
    pub = app.anonymous;
  });
  afterEach(() => app.clock.reset());
  afterAll(async () => app?.close());

  const codeOf = (res: { body: { errors?: { extensions: { code: string } }[] } }) => res.body.errors?.[0]?.extensions.code;

  it('upcomingBookables shows the REST answer in groups with camelCase fields', async () => {
    const f = await setupBookable(app, { slots: 2 });
    const res = await pub.graphql(UPCOMING, { ref: resourceRefs(f).full, groupFormat: 'MMMM', languageTag: 'en' });
    expect(res.body.errors).toBeUndefined();
    const rest = await upcoming(pub, f.resourceUuid, 'groupFormat=MMMM&languageTag=en');
    const [key] = Object.keys(rest.body);
    expect(res.body.data.upcomingBookables).toEqual({
      publicVisible: true,
      groups: [
        {
          key,
          bookables: rest.body[key!].map((b: Record<string, unknown>) => ({
            // Instants in UTC (DateTime); formattedStart/formattedEnd show the provider's wall clock.
            start: new Date(b.start as string).toISOString(),
            end: new Date(b.end as string).toISOString(),
            formattedStart: b.formattedStart,
            formattedEnd: b.formattedEnd,
            timeslotUuid: b.timeslot_uuid,
            appointmentUuid: b.appointment_uuid,
            productUuid: b.product_uuid,
            resourceUuid: b.resource_uuid,
            productName: b.product_name,
            resourceName: b.resource_name,
            contactChannel: b.contact_channel && { ...b.contact_channel, type: (b.contact_channel as { type: string }).type.toUpperCase() },
            capacity: b.capacity,
            capacityLeft: b.capacity_left,
            products: b.products,
            kind: KIND[b.kind as string],
          })),
        },
      ],
    });
    // Where REST answers 204, GraphQL answers no groups.
    await updateResource(f, f.resourceRef, { archived: true });
    const none = await pub.graphql(UPCOMING, { ref: f.resourceUuid });
    expect(none.body.data.upcomingBookables).toEqual({ publicVisible: false, groups: [] });
  });

  it('reserveAppointment and createAppointmentWithConsumer run the flow; errors carry the codes', async () => {
    const f = await setupBookable(app, { capacity: 2 });
    const input = { timeslotUuid: f.timeslotUuid, productUuid: f.productUuid, from: f.slot.from, to: f.slot.to };
    const hold = await pub.graphql(RESERVE, { ref: f.resourceRef, input });
    expect(hold.body.errors).toBeUndefined();
    const reserved = hold.body.data.reserveAppointment;
    expect(reserved.participation).toMatchObject({
      timeslotUuid: f.timeslotUuid,
      resourceUuid: f.resourceUuid,
      productUuid: f.productUuid,
      appointmentCapacity: 2,
      appointmentCapacityLeft: 1,
      customerFullName: null,
      state: 'RESERVED',
      formatedAddress: null,
      messages: [],
    });
    expect(reserved.appointments).toEqual([
      expect.objectContaining({
        uuid: reserved.participation.appointmentUuid,
        kind: 'LOT_APPOINTMENT',
        capacityLeft: 1,
        customers: [
          {
            customerPlaceholderId: reserved.participation.customerUuid,
            customerUuid: reserved.participation.customerUuid,
            participationState: 'RESERVED',
            participationId: reserved.participation.uuid,
          },
        ],
      }),
    ]);

    const email = `${unique('gql')}@example.com`;
    const consumer = { start: f.slot.from, end: f.slot.to, timeslotUuid: f.timeslotUuid, email, firstname: 'Greta', lastname: 'Graph', locale: 'en' };
    // A channel key outside ChannelKey: 400 from GraphQL, the hold stays a hold.
    const badChannel = await pub.graphql(CREATE, { ref: f.resourceUuid, input: { ...consumer, placeholderId: reserved.participation.customerUuid, channelKey: 'resource_public' } });
    expect(badChannel.status).toBe(400);
    expect(codeOf(badChannel)).toBe('BAD_USER_INPUT');
    expect((await participationsOf(app, reserved.participation.appointmentUuid))[0]).toMatchObject({ state: 'RESERVED' });
    const booked = await pub.graphql(CREATE, {
      ref: f.resourceUuid,
      input: { ...consumer, placeholderId: reserved.participation.customerUuid, channelKey: 'RESOURCE_PUBLIC' },
      timeFormat: 'HH:mm',
    });
    expect(booked.body.errors).toBeUndefined();
    expect(booked.body.data.createAppointmentWithConsumer).toMatchObject({
      appointmentUuid: reserved.participation.appointmentUuid,
      timeslotUuid: f.timeslotUuid,
      productUuid: f.productUuid,
      formattedStart: '09:00',
      capacity: 2,
      capacityLeft: 1,
      kind: 'LOT_APPOINTMENT',
      cancelLink: expect.stringContaining('/cancel/'),
    });
    const [row] = await participationsOf(app, reserved.participation.appointmentUuid);
    expect(row).toMatchObject({ id: reserved.participation.uuid, state: 'BOOKED', locale: 'en' });

    const twice = await pub.graphql(CREATE, { ref: f.resourceUuid, input: consumer });
    expect(codeOf(twice)).toBe('ALREADY_PARTICIPATING');
    expect(twice.body.errors![0].extensions).toMatchObject({ status: 409, errorCode: 'AppointmentAlreadyBookedException' });
    expect((await pub.graphql(CREATE, { ref: f.resourceUuid, input: { ...consumer, email: `${unique('b')}@example.com` } })).body.errors).toBeUndefined();
    const full = await pub.graphql(RESERVE, { ref: f.resourceUuid, input });
    expect(full.body.errors![0]).toMatchObject({ message: 'Das überlappt mit einem anderen Termin.', extensions: { code: 'SLOT_TAKEN', status: 412, errorCode: '201' } });
    const invalid = await pub.graphql(CREATE, { ref: f.resourceUuid, input: { ...consumer, email: 'nope', message: 'x'.repeat(1025) } });
    expect(codeOf(invalid)).toBe('VALIDATION_FAILED');
    const unknown = await pub.graphql(RESERVE, { ref: 'unknown@test', input });
    expect(codeOf(unknown)).toBe('NOT_FOUND');
  });

  it('several bookings in one request: one refused does not hide the one made (its cancel link is answered)', async () => {
    const f = await setupBookable(app, { slots: 2 });
    const input = (i: number, extra: Record<string, unknown>) => {
      const from = new Date(Date.parse(f.slot.from) + i * 30 * 60_000).toISOString();
      const to = new Date(Date.parse(from) + 30 * 60_000).toISOString();
      return { start: from, end: to, timeslotUuid: f.timeslotUuid, productUuid: f.productUuid, email: `${unique('two')}@example.com`, firstname: 'Two', lastname: 'Bookings', ...extra };
    };
    const query = `mutation ($ref: String!, $one: ConsumerBookingInput!, $two: ConsumerBookingInput!) {
      one: createAppointmentWithConsumer(ref: $ref, input: $one) { appointmentUuid cancelLink }
      two: createAppointmentWithConsumer(ref: $ref, input: $two) { appointmentUuid cancelLink }
    }`;
    const res = await pub.graphql(query, { ref: f.resourceUuid, one: input(0, {}), two: input(1, { mobile: 'call me' }) });
    expect(res.status).toBe(200);
    expect(res.body.data.one).toMatchObject({ appointmentUuid: expect.any(String), cancelLink: expect.stringContaining('/cancel/') });
    expect(res.body.data.two).toBeNull();
    expect(res.body.errors).toMatchObject([{ path: ['two'], extensions: { code: 'VALIDATION_FAILED' } }]);
    expect((await participationsOf(app, res.body.data.one.appointmentUuid)).map((p) => p.state)).toEqual(['BOOKED']);
  });

  it('activeProducts and publicData need refs or tslRefs and answer the REST shapes', async () => {
    const f = await setupBookable(app);
    const timed = await addProduct(f, { leadTimeMinutes: 5 });
    await updateResource(f, f.resourceRef, { products: [f.productRef, timed.ref] });
    const products = await pub.graphql(
      `query ($refs: [String!], $tslRefs: [String!], $channelKey: ChannelKey) { activeProducts(refs: $refs, tslRefs: $tslRefs, channelKey: $channelKey) {
        uuid name description minDuration maxDuration leadTimeMinutes followUpTimeMinutes exclusive } }`,
      { tslRefs: [f.timeslotUuid] },
    );
    expect(products.body.data.activeProducts).toEqual([
      { uuid: timed.uuid, name: 'Consultation', description: null, minDuration: null, maxDuration: null, leadTimeMinutes: 5, followUpTimeMinutes: null, exclusive: false },
      { uuid: f.productUuid, name: 'Viewing', description: null, minDuration: null, maxDuration: null, leadTimeMinutes: null, followUpTimeMinutes: null, exclusive: false },
    ]);
    expect(codeOf(await pub.graphql('query { activeProducts { uuid } }'))).toBe('VALIDATION_FAILED');

    const data = await pub.graphql(
      `query ($refs: [String!]) { publicData(refs: $refs) {
        contact { name email mobile phone }
        resource { uuid name description contactChannelType msgHelpText url imgUrl }
        provider { name description isThemingAllowed isLocalisationAllowed areCustomFieldsAllowed }
        channel { bookingProcess } } }`,
      { refs: [f.resourceRef] },
    );
    const rest = await pub.post(`/resources/public_data?ref=${encodeURIComponent(f.resourceRef)}`);
    // The same answer, with the contact channel type by its GraphQL name (REST: mobile, GraphQL: MOBILE).
    const type = rest.body.resource.contactChannelType as string | null;
    expect(data.body.data.publicData).toEqual({ ...rest.body, resource: { ...rest.body.resource, contactChannelType: type && type.toUpperCase() } });
    expect(codeOf(await pub.graphql('query { publicData { channel { bookingProcess } } }'))).toBe('VALIDATION_FAILED');
  });

  it('bookingChannels and saveBookingChannel need the CRM key and change what the flow does', async () => {
    const f = await setupBookable(app, { slots: 1 });
    const list = `query ($p: String!, $r: String!) { bookingChannels(providerReference: $p, resourceReference: $r) {
      channelKey visible bookingProcess products exclusiveProducts acceptedCustomers } }`;
    const save = `mutation ($p: String!, $r: String!, $key: ChannelKey!, $input: BookingChannelInput!) {
      saveBookingChannel(providerReference: $p, resourceReference: $r, channelKey: $key, input: $input) {
        channelKey visible bookingProcess products exclusiveProducts acceptedCustomers } }`;
    const vars = { p: f.providerRef, r: f.resourceRef };

    const channels = await f.api.graphql(list, vars);
    expect(channels.body.data.bookingChannels).toHaveLength(4);
    expect(channels.body.data.bookingChannels[0]).toEqual({
      channelKey: 'RESOURCE_PUBLIC',
      visible: true,
      bookingProcess: 'IMMEDIATE',
      products: null,
      exclusiveProducts: [],
      acceptedCustomers: [],
    });
    const saved = await f.api.graphql(save, { ...vars, key: 'RESOURCE_REFERENCE', input: { visible: false, products: [f.productRef] } });
    expect(saved.body.data.saveBookingChannel).toMatchObject({ channelKey: 'RESOURCE_REFERENCE', visible: false, products: [f.productRef] });
    const hidden = await pub.graphql(UPCOMING, { ref: f.resourceUuid, channelKey: 'RESOURCE_REFERENCE' });
    expect(hidden.body.data.upcomingBookables).toEqual({ publicVisible: false, groups: [] });
    expect(bookablesOf((await upcoming(pub, f.resourceUuid)).body)).toHaveLength(1);

    // A channel key or booking process outside its enum is refused by GraphQL with 400; the channel is unchanged.
    for (const [key, input, enumName] of [
      ['NOPE', { visible: false }, 'ChannelKey'],
      ['RESOURCE_PUBLIC', { bookingProcess: 'LATER', visible: false }, 'BookingProcess'],
    ] as const) {
      const refused = await f.api.graphql(save, { ...vars, key, input });
      expect(refused.status).toBe(400);
      expect(codeOf(refused)).toBe('BAD_USER_INPUT');
      expect(refused.body.errors![0].message).toContain(enumName);
    }
    expect((await f.api.graphql(list, vars)).body.data.bookingChannels[0]).toMatchObject({ channelKey: 'RESOURCE_PUBLIC', visible: true, bookingProcess: 'IMMEDIATE' });
    const requested = await f.api.graphql(save, { ...vars, key: 'CALENDAR_PUBLIC', input: { bookingProcess: 'REQUESTED' } });
    expect(requested.body.data.saveBookingChannel).toMatchObject({ channelKey: 'CALENDAR_PUBLIC', bookingProcess: 'REQUESTED' });
    const inline = await pub.graphql(`query { upcomingBookables(ref: "${f.resourceUuid}", channelKey: "CALENDAR_PUBLIC") { publicVisible } }`);
    expect(inline.status).toBe(400);
    expect(codeOf(inline)).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(codeOf(await pub.graphql(list, vars))).toBe('UNAUTHENTICATED');
    expect(codeOf(await pub.graphql(save, { ...vars, key: 'RESOURCE_PUBLIC', input: { visible: false } }))).toBe('UNAUTHENTICATED');
    const other = await app.newCrm();
    expect(codeOf(await other.api.graphql(list, vars))).toBe('NOT_FOUND');
  });
});
