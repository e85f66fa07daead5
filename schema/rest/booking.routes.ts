import { type BookablesResult, renderedUpcomingBookables } from '../../services/booking/bookables.service.js';
import { GZIP_MIN_BYTES, gzipOf } from '../../services/booking/bookables-cache.js';
import { toCreatedAppointmentView, toReserveView } from '../../services/booking/booking.view.js';
import { bookingInput, createAppointmentWithConsumer } from '../../services/booking/consumer-booking.service.js';
import { activeProducts, publicData } from '../../services/booking/public-data.service.js';
import { reserveAppointment, reserveInput } from '../../services/booking/reserve.service.js';
import { channelInput, listChannels, saveChannel } from '../../services/resources/booking-channel.service.js';
import { listQuery, noContent, ok, type Route, stringQuery, wantsFresh, wrap } from './http.js';
import { listParam, textParam } from './openapi/query-params.js';
import {
  activeProductsView,
  channelView,
  createdAppointmentView,
  publicDataView,
  reserveView,
  upcomingBookablesView,
  wrapped,
} from './openapi/response-schemas.js';
import { z } from './openapi/zod-openapi.js';

const tag = 'Booking flow';
const extraRefs = listParam('further resources (UUID, `resourceId@platform` or `resourceId@providerUuid@platform`)');
const channelKey = textParam('booking channel (default RESOURCE_PUBLIC)', 'RESOURCE_PUBLIC');
const publicQueryDoc = z.object({ ref: extraRefs, tslRefs: listParam('timeslots or appointments'), channelKey });

/** Spec section "Booking flow (no authentication)". */
export const bookingRoutes: Route[] = [
  {
    method: 'get',
    path: '/resources/:ref/upcoming_bookables',
    auth: 'public',
    doc: {
      tag,
      summary: 'Bookable slots, grouped by day',
      description: 'Looks 366 days ahead (or `from`/`to`). Answers carry `ETag` and `X-Cache`; `If-None-Match` gets 304. Gzip-compressed for a client whose `Accept-Encoding` asks for it (answers of 1 KB and more).',
      query: z.object({
        ref: extraRefs,
        groupFormat: textParam('date pattern of the group keys (Java/Unicode letters)', 'EEEE, d. MMMM'),
        timeFormat: textParam('date pattern of the formatted times'),
        languageTag: textParam('language of month and day names (default de)', 'de'),
        channelKey,
        prdRef: textParam('only slots this product fits'),
        from: textParam('slot starts from (ISO 8601; without offset in the provider zone)'),
        to: textParam('slot starts before'),
      }),
      responses: {
        200: { description: 'the slots', json: upcomingBookablesView, headers: { ETag: 'send it back as If-None-Match', 'X-Cache': 'HIT or MISS (the gateway’s listing cache)' } },
        204: { description: 'nothing bookable', headers: { 'X-Cache': 'HIT or MISS' } },
        304: { description: 'not modified (If-None-Match)' },
      },
      errors: { 404: 'unknown resource' },
    },
    async handle(ctx, req) {
      const answer = await renderedUpcomingBookables(
        ctx,
        req.params.ref!,
        {
          extraRefs: listQuery(req.query, 'ref'),
          groupFormat: stringQuery(req.query, 'groupFormat'),
          timeFormat: stringQuery(req.query, 'timeFormat'),
          languageTag: stringQuery(req.query, 'languageTag'),
          channelKey: stringQuery(req.query, 'channelKey'),
          prdRef: stringQuery(req.query, 'prdRef'),
          from: stringQuery(req.query, 'from'),
          to: stringQuery(req.query, 'to'),
        },
        { renderer: 'rest', render: renderBookables, fresh: wantsFresh(req.headers) },
      );
      const headers: Record<string, string> = { 'X-Cache': answer.cached ? 'HIT' : 'MISS' };
      if (!answer.body) return { ...noContent(), headers };
      const body = answer.body;
      return { status: 200, json: body, gzipped: body.length >= GZIP_MIN_BYTES ? () => gzipOf(body) : undefined, headers: { ...headers, ETag: answer.etag! } };
    },
  },
  {
    method: 'post',
    path: '/rest/1/resources/:ref/reserve_appointment',
    auth: 'public',
    doc: {
      tag,
      summary: 'Hold a slot',
      description: 'Places a hold (RESERVED) for `HOLD_MINUTES`. `from`/`to` without offset are UTC.',
      body: reserveInput,
      example: { timeslot_uuid: '5f0c6c1e-8d1a-4b8e-9a43-2a8f0c4d9b11', product_uuid: '0b7c2f1d-3e4a-4c5b-8d6e-7f8091a2b3c4', from: '2027-05-04T07:00:00Z', to: '2027-05-04T07:30:00Z' },
      query: z.object({ ref: extraRefs, channelKey }),
      responses: { 200: { description: 'the hold', json: reserveView } },
      errors: { 403: 'not an accepted customer of an exclusive channel', 404: 'unknown resource', 412: 'the slot is full or taken (errorCode "201")' },
    },
    async handle(ctx, req) {
      const result = await reserveAppointment(ctx, req.params.ref!, req.body, {
        extraRefs: listQuery(req.query, 'ref'),
        channelKey: stringQuery(req.query, 'channelKey'),
      });
      const view = toReserveView(result);
      return ok({ ...wrap('participation', view.participation), appointments: view.appointments });
    },
  },
  {
    method: 'post',
    path: '/resources/:ref/create_appointment_with_consumer',
    auth: 'public',
    doc: {
      tag,
      summary: 'Book a slot with the consumer data',
      description: 'Completes the hold named by `placeholder_id`, or books afresh when the place is still free.',
      body: bookingInput,
      example: { start: '2027-05-04T07:00:00Z', end: '2027-05-04T07:30:00Z', timeslot_uuid: '5f0c6c1e-8d1a-4b8e-9a43-2a8f0c4d9b11', product_uuid: '0b7c2f1d-3e4a-4c5b-8d6e-7f8091a2b3c4', placeholder_id: 'c2d3e4f5-a6b7-4c8d-9e0f-1a2b3c4d5e6f', email: 'max@example.com', firstname: 'Max', lastname: 'Muster', locale: 'de' },
      query: z.object({ ref: extraRefs, channelKey, timeFormat: textParam('date pattern of formattedStart/formattedEnd') }),
      responses: { 201: { description: 'booked or requested', json: createdAppointmentView } },
      errors: {
        403: 'not an accepted customer of an exclusive channel',
        404: 'unknown resource',
        409: 'the consumer already takes part (AppointmentAlreadyBookedException)',
        412: 'the slot is taken (errorCode "201")',
      },
    },
    async handle(ctx, req) {
      const result = await createAppointmentWithConsumer(ctx, req.params.ref!, req.body, {
        extraRefs: listQuery(req.query, 'ref'),
        channelKey: stringQuery(req.query, 'channelKey'),
        timeFormat: stringQuery(req.query, 'timeFormat'),
      });
      return ok(wrap('createdAppointment', await toCreatedAppointmentView(ctx, result)), 201);
    },
  },
  {
    method: 'post',
    path: '/products/active_products',
    auth: 'public',
    doc: { tag, summary: 'Products offered by resources', query: publicQueryDoc, responses: { 200: { description: 'the products', json: activeProductsView } }, errors: { 404: 'unknown resource' } },
    async handle(ctx, req) {
      const products = await activeProducts(ctx, publicQuery(req.query));
      return ok({ products });
    },
  },
  {
    method: 'post',
    path: '/resources/public_data',
    auth: 'public',
    doc: { tag, summary: 'What a booking page shows about a resource', query: publicQueryDoc, responses: { 200: { description: 'the data', json: publicDataView } }, errors: { 404: 'unknown resource' } },
    handle: async (ctx, req) => ok(await publicData(ctx, publicQuery(req.query))),
  },
  // Extension: booking-channel settings of a resource (the spec names the channels but no endpoint for them).
  {
    method: 'get',
    path: '/crms/:crmId/provider/:providerRef/resources/:resourceRef/channels',
    auth: 'crm',
    doc: { tag: 'Offerings', summary: 'Booking channels of a resource (extension)', responses: { 200: { description: 'the four channels', json: z.array(channelView) } } },
    handle: async (ctx, req) => ok(await listChannels(ctx, req.params.providerRef!, req.params.resourceRef!)),
  },
  {
    method: 'put',
    path: '/crms/:crmId/provider/:providerRef/resources/:resourceRef/channels/:channelKey',
    auth: 'crm',
    doc: {
      tag: 'Offerings',
      summary: 'Change the settings of a booking channel (extension)',
      body: channelInput,
      responses: { 200: { description: 'the channel', json: wrapped('channel', channelView) } },
    },
    handle: async (ctx, req) =>
      ok(wrap('channel', await saveChannel(ctx, req.params.providerRef!, req.params.resourceRef!, req.params.channelKey!, req.body))),
  },
];

/** The spec's body: one key per group, plus public_visible; null (204) when nothing is bookable. */
function renderBookables(result: BookablesResult): Buffer | null {
  if (!result.groups.length) return null;
  return Buffer.from(JSON.stringify({ ...Object.fromEntries(result.groups), public_visible: result.publicVisible }));
}

function publicQuery(query: Record<string, unknown>) {
  return { refs: listQuery(query, 'ref'), tslRefs: listQuery(query, 'tslRefs'), channelKey: stringQuery(query, 'channelKey') };
}
