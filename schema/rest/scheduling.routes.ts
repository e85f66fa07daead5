import { cancelAppointment, deleteAppointmentsSilently } from '../../services/appointments/appointment-cancel.service.js';
import { createAppointments, listAppointments } from '../../services/appointments/appointment.service.js';
import { toAppointmentView } from '../../services/appointments/appointment.view.js';
import { createCustomer, deleteCustomer, getCustomer, toCustomerView, updateCustomer } from '../../services/customers/customer.service.js';
import { createParticipation, toParticipationView, updateParticipationState } from '../../services/participations/participation.service.js';
import { createTimeslots, deleteTimeslot, listTimeslots, updateTimeslot } from '../../services/timeslots/timeslot.service.js';
import { toTimeslotView } from '../../services/timeslots/timeslot.view.js';
import { booleanQuery, noContent, ok, type Route, stringQuery, wrap } from './http.js';

const P = '/crms/:crmId/provider/:providerRef';

/** Spec sections "Scheduling": timeslots, appointments, participations, customers. */
export const schedulingRoutes: Route[] = [
  {
    method: 'post',
    path: `${P}/timeslots`,
    auth: 'crm',
    async handle(ctx, req) {
      const timeslots = await createTimeslots(ctx, req.params.providerRef!, req.body);
      return ok(wrap('timeslots', timeslots.map((t) => toTimeslotView(t))), 201);
    },
  },
  {
    method: 'get',
    path: `${P}/resource/:resourceRef/timeslots`,
    auth: 'crm',
    async handle(ctx, req) {
      const found = await listTimeslots(ctx, req.params.providerRef!, req.params.resourceRef!, {
        from: stringQuery(req.query, 'from'),
        to: stringQuery(req.query, 'to'),
      });
      return ok(found.map(({ timeslot, appointments }) => toTimeslotView(timeslot, appointments, ctx.clock.now())));
    },
  },
  {
    method: 'put',
    path: `${P}/timeslots/:timeslotRef`,
    auth: 'crm',
    handle: async (ctx, req) => ok(wrap('timeslot', toTimeslotView(await updateTimeslot(ctx, req.params.providerRef!, req.params.timeslotRef!, req.body)))),
  },
  {
    method: 'delete',
    path: `${P}/timeslots/:timeslotRef`,
    auth: 'crm',
    async handle(ctx, req) {
      await deleteTimeslot(ctx, req.params.providerRef!, req.params.timeslotRef!);
      return noContent();
    },
  },
  {
    method: 'get',
    path: `${P}/appointments`,
    auth: 'crm',
    async handle(ctx, req) {
      const appointments = await listAppointments(ctx, req.params.providerRef!, {
        productRef: stringQuery(req.query, 'productRef'),
        resourceRef: stringQuery(req.query, 'resourceRef'),
        includeArchived: booleanQuery(req.query, 'includeArchived', false),
      });
      return ok(appointments.map((a) => toAppointmentView(a, ctx.clock.now())));
    },
  },
  {
    method: 'post',
    path: `${P}/appointments`,
    auth: 'crm',
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
    async handle(ctx, req) {
      await deleteAppointmentsSilently(ctx, req.params.providerRef!, req.body);
      return noContent();
    },
  },
  {
    method: 'delete',
    path: `${P}/appointments`,
    auth: 'crm',
    async handle(ctx, req) {
      const appointment = await cancelAppointment(ctx, req.params.providerRef!, req.body, stringQuery(req.query, 'message') ?? null);
      return ok(wrap('appointment', toAppointmentView(appointment, ctx.clock.now())));
    },
  },
  {
    method: 'post',
    path: `${P}/participations`,
    auth: 'crm',
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
    async handle(ctx, req) {
      const participation = await updateParticipationState(ctx, req.params.providerRef!, req.params.participationRef!, req.body, booleanQuery(req.query, 'sendMails', true));
      return ok(wrap('participation', toParticipationView(participation)));
    },
  },
  {
    method: 'get',
    path: `${P}/customers/:customerRef`,
    auth: 'crm',
    async handle(ctx, req) {
      const customer = await getCustomer(ctx, req.params.providerRef!, req.params.customerRef!);
      return customer ? ok(wrap('customer', toCustomerView(customer))) : noContent();
    },
  },
  {
    method: 'post',
    path: `${P}/customers`,
    auth: 'crm',
    async handle(ctx, req) {
      const { customer, created } = await createCustomer(ctx, req.params.providerRef!, req.body);
      return ok(wrap('customer', toCustomerView(customer)), created ? 201 : 200);
    },
  },
  {
    method: 'put',
    path: `${P}/customers/:customerRef`,
    auth: 'crm',
    handle: async (ctx, req) => ok(wrap('customer', toCustomerView(await updateCustomer(ctx, req.params.providerRef!, req.params.customerRef!, req.body)))),
  },
  {
    method: 'delete',
    path: `${P}/customers/:customerRef`,
    auth: 'crm',
    async handle(ctx, req) {
      await deleteCustomer(ctx, req.params.providerRef!, req.params.customerRef!, booleanQuery(req.query, 'ignoreFutureAppointments', false));
      return noContent();
    },
  },
];
