import { GraphQLDateTime } from 'graphql-scalars';
import { Arg, Ctx, Int, Mutation, Query, Resolver } from 'type-graphql';
import { cancelAppointment, deleteAppointmentsSilently } from '../../../services/appointments/appointment-cancel.service.js';
import type { Appointment } from '../../../services/appointments/appointment.entity.js';
import { APPOINTMENT_PAGE_MAX, createAppointments, listAppointments } from '../../../services/appointments/appointment.service.js';
import { type AppointmentView, toAppointmentView } from '../../../services/appointments/appointment.view.js';
import { createCustomer, deleteCustomer, getCustomer, toCustomerView, updateCustomer } from '../../../services/customers/customer.service.js';
import type { toLocationView } from '../../../services/kernel/address-input.js';
import type { Context } from '../../../services/kernel/context.js';
import { DomainError, unlessNotFound } from '../../../services/kernel/errors.js';
import { PAGE_SIZE_DEFAULT } from '../../../services/kernel/pagination.js';
import { createParticipation, type ParticipationNodeView, participationNodeOf, toParticipationNode, updateParticipationState } from '../../../services/participations/participation.service.js';
import type { Timeslot } from '../../../services/timeslots/timeslot.entity.js';
import { createTimeslots, deleteTimeslot, listTimeslots, TIMESLOT_PAGE_MAX, updateTimeslot } from '../../../services/timeslots/timeslot.service.js';
import { type TimeslotView, toTimeslotView } from '../../../services/timeslots/timeslot.view.js';
import { toConnection } from '../connection.js';
import { ParticipationState } from '../enums.js';
import { lookupDescription } from '../not-found.js';
import { plain } from '../plain.js';
import {
  AppointmentConnection,
  AppointmentInput,
  AppointmentSeriesInput,
  AppointmentSeriesType,
  AppointmentType,
  CreateCustomerPayload,
  CreateParticipationPayload,
  CustomerInput,
  CustomerType,
  CustomerUpdateInput,
  type LocationValue,
  ParticipationInput,
  ParticipationType,
  TimeslotConnection,
  TimeslotInput,
  TimeslotType,
  TimeslotUpdateInput,
} from './scheduling.types.js';

/** Free-text locations become `TextLocation` objects, since a GraphQL union holds only object types. */
const toLocation = (value: ReturnType<typeof toLocationView>): LocationValue | null =>
  value === null ? null : typeof value === 'string' ? { text: value } : value;

const appointmentTypeOf = (view: AppointmentView<ParticipationNodeView>): AppointmentType => ({
  ...view,
  id: view.uuid,
  address: toLocation(view.address),
  participations: view.participations.map((participation) => ({ ...participation, appointmentReference: view.reference })),
});

/** An appointment as GraphQL shows it: the /crms view, with the ids of the appointment and of its participations. */
export const toAppointmentType = (appointment: Appointment, now: Date): AppointmentType =>
  appointmentTypeOf(toAppointmentView(appointment, now, toParticipationNode));

/** A timeslot as GraphQL shows it, with the views of the appointments made from it when given. */
const toTimeslotType = (timeslot: Timeslot, appointments?: AppointmentView<ParticipationNodeView>[]): TimeslotType => {
  const view: TimeslotView<ParticipationNodeView> = toTimeslotView(timeslot, appointments);
  return { ...view, id: view.uuid, address: toLocation(view.address), appointments: view.appointments ? view.appointments.map(appointmentTypeOf) : null };
};

/** Timeslots, appointments and series, participations and customers; every operation needs the CRM key. */
@Resolver()
export class SchedulingResolver {
  @Query(() => TimeslotConnection, { description: 'A page of a resource’s timeslots overlapping [from, to), by start, with their appointments: those made from them and the CRM’s own appointments of the resource that overlap them.' })
  async timeslots(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('resourceReference', () => String) resourceReference: string,
    @Arg('from', () => String, { description: 'ISO 8601; without offset in the provider’s time zone' }) from: string,
    @Arg('to', () => String) to: string,
    @Arg('first', () => Int, { defaultValue: PAGE_SIZE_DEFAULT, description: `1..${TIMESLOT_PAGE_MAX}` }) first: number,
    @Arg('after', () => String, { nullable: true, description: 'endCursor of the previous page' }) after: string | null,
  ): Promise<TimeslotConnection> {
    const found = await listTimeslots(ctx, { providerReference, resourceReference, from, to }, participationNodeOf, { first, after });
    return toConnection(found, ({ timeslot, appointments }) => toTimeslotType(timeslot, appointments));
  }

  @Mutation(() => [TimeslotType], { nullable: true, description: 'Creates a batch of timeslots, all or none.' })
  async createTimeslots(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('timeslots', () => [TimeslotInput]) timeslots: TimeslotInput[],
  ): Promise<TimeslotType[]> {
    const created = await createTimeslots(ctx, providerReference, { timeslots: plain(timeslots) });
    return created.map((timeslot) => toTimeslotType(timeslot));
  }

  @Mutation(() => TimeslotType, { nullable: true, description: 'Changes only the fields given.' })
  async updateTimeslot(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('reference', () => String) reference: string,
    @Arg('input', () => TimeslotUpdateInput) input: TimeslotUpdateInput,
  ): Promise<TimeslotType> {
    return toTimeslotType(await updateTimeslot(ctx, providerReference, reference, plain(input)));
  }

  @Mutation(() => Boolean, { nullable: true, description: 'Deletes a timeslot; refused (HAS_ACTIVE_APPOINTMENTS) while an appointment made from it is not cancelled.' })
  async deleteTimeslot(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('reference', () => String) reference: string,
  ): Promise<boolean> {
    await deleteTimeslot(ctx, providerReference, reference);
    return true;
  }

  @Query(() => AppointmentConnection, { description: 'A page of the provider’s appointments (active and cancelled), oldest start first (ties by reference).' })
  async appointments(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('productRef', () => String, { nullable: true }) productRef: string | null,
    @Arg('resourceRef', () => String, { nullable: true }) resourceRef: string | null,
    @Arg('includeArchived', () => Boolean, { defaultValue: false }) includeArchived: boolean,
    @Arg('from', () => GraphQLDateTime, { nullable: true, description: 'Only appointments starting at or after this instant' }) from: Date | null,
    @Arg('to', () => GraphQLDateTime, { nullable: true, description: 'Only appointments starting before this instant' }) to: Date | null,
    @Arg('first', () => Int, { defaultValue: PAGE_SIZE_DEFAULT, description: `1..${APPOINTMENT_PAGE_MAX}` }) first: number,
    @Arg('after', () => String, { nullable: true, description: 'endCursor of the previous page' }) after: string | null,
  ): Promise<AppointmentConnection> {
    const found = await listAppointments(
      ctx,
      providerReference,
      { productRef: productRef || undefined, resourceRef: resourceRef || undefined, includeArchived, from: from ?? undefined, to: to ?? undefined },
      { first, after },
      participationNodeOf,
    );
    return toConnection(found, appointmentTypeOf);
  }

  @Mutation(() => AppointmentType, { nullable: true, description: 'Creates a single appointment.' })
  async createAppointment(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('input', () => AppointmentInput) input: AppointmentInput,
  ): Promise<AppointmentType> {
    const result = await createAppointments(ctx, providerReference, plain(input));
    if (result.kind !== 'single') throw new DomainError('INTERNAL', 'expected a single appointment');
    return toAppointmentType(result.appointment, ctx.clock.now());
  }

  @Mutation(() => AppointmentSeriesType, { nullable: true, description: 'Creates a series of appointments from series_data.' })
  async createAppointmentSeries(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('input', () => AppointmentSeriesInput) input: AppointmentSeriesInput,
  ): Promise<AppointmentSeriesType> {
    const result = await createAppointments(ctx, providerReference, plain(input));
    if (result.kind !== 'series') throw new DomainError('INTERNAL', 'expected a series');
    const now = ctx.clock.now();
    return { seriesId: result.seriesId, appointments: result.appointments.map((appointment) => toAppointmentType(appointment, now)) };
  }

  @Mutation(() => Int, { nullable: true, description: 'Deletes an appointment, or every appointment of a series, informing nobody; returns how many.' })
  async deleteAppointmentsWithoutNotification(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('appointmentReference', () => String, { nullable: true }) appointmentReference: string | null,
    @Arg('seriesId', () => String, { nullable: true }) seriesId: string | null,
  ): Promise<number> {
    return deleteAppointmentsSilently(ctx, providerReference, { appointmentReference, seriesId });
  }

  @Mutation(() => AppointmentType, { nullable: true, description: 'Cancels an appointment and e-mails every participant (with the message).' })
  async cancelAppointment(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('appointmentReference', () => String) appointmentReference: string,
    @Arg('message', () => String, { nullable: true }) message: string | null,
  ): Promise<AppointmentType> {
    const appointment = await cancelAppointment(ctx, providerReference, { appointmentReference }, message ?? null);
    return toAppointmentType(appointment, ctx.clock.now());
  }

  @Mutation(() => CreateParticipationPayload, { nullable: true, description: 'Adds a customer to an appointment; an existing reference is updated unless onDuplicateRaise.' })
  async createParticipation(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('input', () => ParticipationInput) input: ParticipationInput,
    @Arg('ignoreCapacity', () => Boolean, { defaultValue: false }) ignoreCapacity: boolean,
    @Arg('onDuplicateRaise', () => Boolean, { defaultValue: false }) onDuplicateRaise: boolean,
    @Arg('sendMails', () => Boolean, { defaultValue: true }) sendMails: boolean,
  ): Promise<CreateParticipationPayload> {
    const { participation, created } = await createParticipation(ctx, providerReference, plain(input), { ignoreCapacity, onDuplicateRaise, sendMails });
    return { participation: toParticipationNode(participation), created };
  }

  @Mutation(() => ParticipationType, { nullable: true, description: 'Changes a participation’s state by the transition table.' })
  async updateParticipationState(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('reference', () => String) reference: string,
    @Arg('state', () => ParticipationState) state: ParticipationState,
    @Arg('message', () => String, { nullable: true }) message: string | null,
    @Arg('sendMails', () => Boolean, { defaultValue: true }) sendMails: boolean,
  ): Promise<ParticipationType> {
    return toParticipationNode(await updateParticipationState(ctx, providerReference, reference, { state, message }, sendMails));
  }

  @Query(() => CustomerType, { nullable: true, description: lookupDescription('A customer of the provider by reference', 'the customer (an erased one too) or the provider is unknown') })
  async customer(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('reference', () => String) reference: string,
  ): Promise<CustomerType | null> {
    const customer = await unlessNotFound(getCustomer(ctx, providerReference, reference));
    return customer ? toCustomerView(customer) : null;
  }

  @Mutation(() => CreateCustomerPayload, { nullable: true, description: 'Creates a customer, or returns the existing one unchanged.' })
  async createCustomer(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('input', () => CustomerInput) input: CustomerInput,
  ): Promise<CreateCustomerPayload> {
    const { customer, created } = await createCustomer(ctx, providerReference, plain(input));
    return { customer: toCustomerView(customer), created };
  }

  @Mutation(() => CustomerType, { nullable: true, description: 'Changes only the fields given; the reference may change.' })
  async updateCustomer(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('reference', () => String) reference: string,
    @Arg('input', () => CustomerUpdateInput) input: CustomerUpdateInput,
  ): Promise<CustomerType> {
    return toCustomerView(await updateCustomer(ctx, providerReference, reference, plain(input)));
  }

  @Mutation(() => Boolean, { nullable: true, description: 'Erases a customer; with ignoreFutureAppointments it is first removed from future appointments and informed.' })
  async deleteCustomer(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('reference', () => String) reference: string,
    @Arg('ignoreFutureAppointments', () => Boolean, { defaultValue: false }) ignoreFutureAppointments: boolean,
  ): Promise<boolean> {
    await deleteCustomer(ctx, providerReference, reference, ignoreFutureAppointments);
    return true;
  }
}
