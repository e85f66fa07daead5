import { cancelAppointment, cancelInput, deleteAppointmentsSilently, deleteInput } from '../../services/appointments/appointment-cancel.service.js';
import { createAppointments, listAppointmentViews, seriesInput, singleInput } from '../../services/appointments/appointment.service.js';
import { toAppointmentView } from '../../services/appointments/appointment.view.js';
import {
  createCustomer,
  customerCreateInput,
  customerUpdateInput,
  deleteCustomer,
  getCustomer,
  toCustomerView,
  updateCustomer,
} from '../../services/customers/customer.service.js';
import {
  createParticipation,
  participationCreateInput,
  participationUpdateInput,
  participationViewOf,
  toParticipationView,
  updateParticipationState,
} from '../../services/participations/participation.service.js';
import { createTimeslots, deleteTimeslot, listTimeslots, timeslotCreateInput, timeslotUpdateInput, updateTimeslot } from '../../services/timeslots/timeslot.service.js';
import { toTimeslotView } from '../../services/timeslots/timeslot.view.js';
import { booleanQuery, noContent, ok, type Route, stringQuery, wrap } from './http.js';
import { flagParam, requiredTextParam, textParam } from './openapi/query-params.js';
import { apiInfo, appointmentView, customerView, participationView, timeslotView, timeslotWithAppointmentsView, wrapped } from './openapi/response-schemas.js';
import { z } from './openapi/zod-openapi.js';

const tag = 'Scheduling';
const sendMails = flagParam('send the mails of the state change (default true)');

const P = '/crms/:crmId/provider/:providerRef';

/** Spec sections "Scheduling": timeslots, appointments, participations, customers. */
export const schedulingRoutes: Route[] = [
  {
    method: 'post',
    path: `${P}/timeslots`,
    auth: 'crm',
    doc: {
      tag,
      summary: 'Create timeslots',
      description: 'Times without offset are wall-clock times of the provider. Timeslots of one resource may not overlap. At most 500 per request.',
      body: timeslotCreateInput,
      example: { timeslots: [{ resourceReference: 'flat1@crm', start: '2027-05-04T09:00', end: '2027-05-04T12:00', raster: 30, defaultCapacity: 3, defaultAcceptBookings: true, state: 'BOOKABLE' }] },
      responses: { 201: { description: 'created', json: wrapped('timeslots', z.array(timeslotView)) } },
      errors: { 409: 'overlaps another timeslot of the resource' },
    },
    async handle(ctx, req) {
      const timeslots = await createTimeslots(ctx, req.params.providerRef!, req.body);
      return ok(wrap('timeslots', timeslots.map((t) => toTimeslotView(t))), 201);
    },
  },
  {
    method: 'get',
    path: `${P}/resource/:resourceRef/timeslots`,
    auth: 'crm',
    doc: {
      tag,
      summary: 'List the timeslots of a resource, with their appointments',
      query: z.object({
        from: requiredTextParam('only timeslots ending after this time', '2027-05-01T00:00'),
        to: requiredTextParam('only timeslots starting before this time', '2027-06-01T00:00'),
      }),
      responses: { 200: { description: 'the timeslots', json: z.array(timeslotWithAppointmentsView) } },
    },
    async handle(ctx, req) {
      const found = await listTimeslots(
        ctx,
        { providerReference: req.params.providerRef!, resourceReference: req.params.resourceRef!, from: stringQuery(req.query, 'from'), to: stringQuery(req.query, 'to') },
        participationViewOf,
      );
      return ok(found.map(({ timeslot, appointments }) => toTimeslotView(timeslot, appointments)));
    },
  },
  {
    method: 'put',
    path: `${P}/timeslots/:timeslotRef`,
    auth: 'crm',
    doc: {
      tag,
      summary: 'Update a timeslot',
      body: timeslotUpdateInput,
      responses: { 200: { description: 'updated', json: wrapped('timeslot', timeslotView) } },
      errors: { 409: 'overlap, or start/end/raster changed while an active appointment was made from it' },
    },
    handle: async (ctx, req) => ok(wrap('timeslot', toTimeslotView(await updateTimeslot(ctx, req.params.providerRef!, req.params.timeslotRef!, req.body)))),
  },
  {
    method: 'delete',
    path: `${P}/timeslots/:timeslotRef`,
    auth: 'crm',
    doc: { tag, summary: 'Delete a timeslot', responses: { 204: { description: 'deleted' } }, errors: { 409: 'an active appointment was made from it' } },
    async handle(ctx, req) {
      await deleteTimeslot(ctx, req.params.providerRef!, req.params.timeslotRef!);
      return noContent();
    },
  },
  {
    method: 'get',
    path: `${P}/appointments`,
    auth: 'crm',
    doc: {
      tag,
      summary: 'List the appointments of a provider',
      query: z.object({
        productRef: textParam('only appointments of this product'),
        resourceRef: textParam('only appointments of this resource'),
        includeArchived: flagParam('include archived appointments'),
      }),
      responses: { 200: { description: 'the appointments', json: z.array(appointmentView) } },
    },
    async handle(ctx, req) {
      const appointments = await listAppointmentViews(ctx, req.params.providerRef!, {
        productRef: stringQuery(req.query, 'productRef'),
        resourceRef: stringQuery(req.query, 'resourceRef'),
        includeArchived: booleanQuery(req.query, 'includeArchived', false),
      });
      return ok(appointments);
    },
  },
  {
    method: 'post',
    path: `${P}/appointments`,
    auth: 'crm',
    doc: {
      tag,
      summary: 'Create an appointment or a series',
      description: 'A body with `series_data` creates a series (`seriesInput`), else one appointment with optional `participations`.',
      body: z.union([singleInput, seriesInput]),
      responses: {
        201: {
          description: 'created: `{api-info, appointment}`, or `{api-info, seriesId, appointments}` for a series',
          json: z.union([wrapped('appointment', appointmentView), z.object({ 'api-info': apiInfo, seriesId: z.string(), appointments: z.array(appointmentView) })]),
        },
      },
      errors: { 409: 'reference taken, or an embedded participation does not fit' },
    },
    async handle(ctx, req) {
      const result = await createAppointments(ctx, req.params.providerRef!, req.body);
      const now = ctx.clock.now();
      if (result.kind === 'single') return ok(wrap('appointment', toAppointmentView(result.appointment, now)), 201);
      return ok({ ...wrap('seriesId', result.seriesId), appointments: result.appointments.map((a) => toAppointmentView(a, now)) }, 201);
    },
  },
  {
    method: 'delete',
    path: `${P}/appointments/withoutNotification`,
    auth: 'crm',
    doc: { tag, summary: 'Delete an appointment or a series without notifying anybody', body: deleteInput, responses: { 204: { description: 'deleted' } } },
    async handle(ctx, req) {
      await deleteAppointmentsSilently(ctx, req.params.providerRef!, req.body);
      return noContent();
    },
  },
  {
    method: 'delete',
    path: `${P}/appointments`,
    auth: 'crm',
    doc: {
      tag,
      summary: 'Cancel an appointment',
      description: 'Every participation becomes CANCELED; booked and requested participants get the cancellation mail with `message`. Idempotent.',
      body: cancelInput,
      query: z.object({ message: textParam('the text of the cancellation mail') }),
      responses: { 200: { description: 'cancelled', json: wrapped('appointment', appointmentView) } },
    },
    async handle(ctx, req) {
      const appointment = await cancelAppointment(ctx, req.params.providerRef!, req.body, stringQuery(req.query, 'message') ?? null);
      return ok(wrap('appointment', toAppointmentView(appointment, ctx.clock.now())));
    },
  },
  {
    method: 'post',
    path: `${P}/participations`,
    auth: 'crm',
    doc: {
      tag,
      summary: 'Create or update a participation',
      body: participationCreateInput,
      query: z.object({
        ignoreCapacity: flagParam('book even when the appointment is full'),
        onDuplicateRaise: flagParam('409 instead of a state change when the reference exists'),
        sendMails,
      }),
      responses: {
        201: { description: 'created', json: wrapped('participation', participationView) },
        200: { description: 'state changed', json: wrapped('participation', participationView) },
      },
      errors: { 409: 'full, duplicate, or a move the transition table forbids' },
    },
    async handle(ctx, req) {
      const { participation, created } = await createParticipation(ctx, req.params.providerRef!, req.body, {
        ignoreCapacity: booleanQuery(req.query, 'ignoreCapacity', false),
        onDuplicateRaise: booleanQuery(req.query, 'onDuplicateRaise', false),
        sendMails: booleanQuery(req.query, 'sendMails', true),
      });
      return ok(wrap('participation', toParticipationView(participation)), created ? 201 : 200);
    },
  },
  {
    method: 'post',
    path: `${P}/participations/:participationRef`,
    auth: 'crm',
    doc: {
      tag,
      summary: 'Change the state of a participation',
      body: participationUpdateInput,
      query: z.object({ sendMails }),
      responses: { 200: { description: 'the participation', json: wrapped('participation', participationView) } },
      errors: { 409: 'a move the transition table forbids' },
    },
    async handle(ctx, req) {
      const participation = await updateParticipationState(ctx, req.params.providerRef!, req.params.participationRef!, req.body, booleanQuery(req.query, 'sendMails', true));
      return ok(wrap('participation', toParticipationView(participation)));
    },
  },
  {
    method: 'get',
    path: `${P}/customers/:customerRef`,
    auth: 'crm',
    doc: {
      tag,
      summary: 'Get a customer',
      responses: { 200: { description: 'the customer', json: wrapped('customer', customerView) }, 204: { description: 'no such customer (as the spec shows)' } },
    },
    async handle(ctx, req) {
      const customer = await getCustomer(ctx, req.params.providerRef!, req.params.customerRef!);
      return customer ? ok(wrap('customer', toCustomerView(customer))) : noContent();
    },
  },
  {
    method: 'post',
    path: `${P}/customers`,
    auth: 'crm',
    doc: {
      tag,
      summary: 'Create a customer',
      body: customerCreateInput,
      responses: { 201: { description: 'created', json: wrapped('customer', customerView) }, 200: { description: 'already there', json: wrapped('customer', customerView) } },
    },
    async handle(ctx, req) {
      const { customer, created } = await createCustomer(ctx, req.params.providerRef!, req.body);
      return ok(wrap('customer', toCustomerView(customer)), created ? 201 : 200);
    },
  },
  {
    method: 'put',
    path: `${P}/customers/:customerRef`,
    auth: 'crm',
    doc: { tag, summary: 'Update a customer', body: customerUpdateInput, responses: { 200: { description: 'updated', json: wrapped('customer', customerView) } } },
    handle: async (ctx, req) => ok(wrap('customer', toCustomerView(await updateCustomer(ctx, req.params.providerRef!, req.params.customerRef!, req.body)))),
  },
  {
    method: 'delete',
    path: `${P}/customers/:customerRef`,
    auth: 'crm',
    doc: {
      tag,
      summary: 'Erase a customer',
      description: 'Participations are kept with every personal field overwritten.',
      query: z.object({ ignoreFutureAppointments: flagParam('erase even with future appointments') }),
      responses: { 204: { description: 'erased' } },
      errors: { 409: 'the customer has future appointments' },
    },
    async handle(ctx, req) {
      await deleteCustomer(ctx, req.params.providerRef!, req.params.customerRef!, booleanQuery(req.query, 'ignoreFutureAppointments', false));
      return noContent();
    },
  },
];
