import { type BookablesResult, renderedUpcomingBookables } from '../../services/booking/bookables.service.js';
import { toCreatedAppointmentView, toReserveView } from '../../services/booking/booking.view.js';
import { createAppointmentWithConsumer } from '../../services/booking/consumer-booking.service.js';
import { activeProducts, publicData } from '../../services/booking/public-data.service.js';
import { reserveAppointment } from '../../services/booking/reserve.service.js';
import { listChannels, saveChannel } from '../../services/resources/booking-channel.service.js';
import { listQuery, noContent, ok, type Route, stringQuery, wantsFresh, wrap } from './http.js';

/** Spec section "Booking flow (no authentication)". */
export const bookingRoutes: Route[] = [
  {
    method: 'get',
    path: '/resources/:ref/upcoming_bookables',
    auth: 'public',
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
      return { status: 200, json: answer.body, headers: { ...headers, ETag: answer.etag! } };
    },
  },
  {
    method: 'post',
    path: '/rest/1/resources/:ref/reserve_appointment',
    auth: 'public',
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
    async handle(ctx, req) {
      const products = await activeProducts(ctx, publicQuery(req.query));
      return ok({ products });
    },
  },
  {
    method: 'post',
    path: '/resources/public_data',
    auth: 'public',
    handle: async (ctx, req) => ok(await publicData(ctx, publicQuery(req.query))),
  },
  // Extension: booking-channel settings of a resource (the spec names the channels but no endpoint for them).
  {
    method: 'get',
    path: '/crms/:crmId/provider/:providerRef/resources/:resourceRef/channels',
    auth: 'crm',
    handle: async (ctx, req) => ok(await listChannels(ctx, req.params.providerRef!, req.params.resourceRef!)),
  },
  {
    method: 'put',
    path: '/crms/:crmId/provider/:providerRef/resources/:resourceRef/channels/:channelKey',
    auth: 'crm',
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
