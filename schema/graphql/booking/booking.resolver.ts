import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { type BookableView, upcomingBookables } from '../../../services/booking/bookables.service.js';
import { toCreatedAppointmentView, toReserveView } from '../../../services/booking/booking.view.js';
import { createAppointmentWithConsumer } from '../../../services/booking/consumer-booking.service.js';
import { activeProducts, publicData } from '../../../services/booking/public-data.service.js';
import { reserveAppointment } from '../../../services/booking/reserve.service.js';
import { slotId } from '../../../services/booking/slot-id.js';
import type { Context } from '../../../services/kernel/context.js';
import { listChannels, saveChannel } from '../../../services/resources/booking-channel.service.js';
import { ChannelKey } from '../enums.js';
import { plain } from '../plain.js';
import {
  ActiveProductType,
  type BookableType,
  BookingChannelInput,
  BookingChannelType,
  ConsumerBookingInput,
  CreatedAppointmentType,
  PublicDataType,
  ReserveAppointmentInput,
  ReserveAppointmentPayload,
  UpcomingBookablesType,
} from './booking.types.js';
import { camelKeys } from './camel-keys.js';

const REFS = 'additional resources (REST: the repeatable query parameter ref)';
const CHANNEL = 'default RESOURCE_PUBLIC';
const WINDOW_FROM = 'extension: list slots starting at or after this ISO 8601 date-time (without offset: the provider’s time zone); default now';
const WINDOW_TO = 'extension: list slots starting before this; default from + 366 days, at most 366 days after from';
/**
 * A bookable of the listing or of a capacity change as GraphQL shows it: the
 * REST view in camelCase with the slot's `id` (a plain field: subscriptions
 * deliver it to every subscriber, so no resolver runs per item).
 */
export const toBookableType = (view: BookableView): BookableType => ({
  id: slotId(view.resource_uuid, view.start, view.end),
  start: view.start,
  end: view.end,
  formattedStart: view.formattedStart,
  formattedEnd: view.formattedEnd,
  timeslotUuid: view.timeslot_uuid,
  appointmentUuid: view.appointment_uuid,
  productUuid: view.product_uuid,
  resourceUuid: view.resource_uuid,
  productName: view.product_name,
  resourceName: view.resource_name,
  contactChannel: view.contact_channel,
  capacity: view.capacity,
  capacityLeft: view.capacity_left,
  products: view.products,
  kind: view.kind,
});

const orUndefined = (value: string | null | undefined): string | undefined => value ?? undefined;

/**
 * The public booking flow (no key needed) and the booking-channel settings
 * (CRM key). Same services as the REST routes; REST snake_case field names
 * appear here in camelCase (see booking.types.ts).
 */
@Resolver()
export class BookingResolver {
  @Query(() => UpcomingBookablesType, { description: 'Bookable slots of a resource (REST GET /resources/:ref/upcoming_bookables).' })
  async upcomingBookables(
    @Ctx() ctx: Context,
    @Arg('ref', () => String, { description: 'resource UUID, resourceId@providerUuid@platform or resourceId@platform' }) ref: string,
    @Arg('refs', () => [String], { nullable: true, description: REFS }) refs: string[] | null,
    @Arg('groupFormat', () => String, { nullable: true, description: 'date pattern, default yyyy-MM-dd' }) groupFormat: string | null,
    @Arg('timeFormat', () => String, { nullable: true, description: 'date pattern, default yyyy-MM-dd HH:mm' }) timeFormat: string | null,
    @Arg('languageTag', () => String, { nullable: true, description: 'language tag of month and day names (de, en-GB, fr, …; an unknown one counts as de), default de' }) languageTag: string | null,
    @Arg('channelKey', () => ChannelKey, { nullable: true, description: CHANNEL }) channelKey: ChannelKey | null,
    @Arg('prdRef', () => String, { nullable: true, description: 'product reference or UUID' }) prdRef: string | null,
    @Arg('from', () => String, { nullable: true, description: WINDOW_FROM }) from: string | null,
    @Arg('to', () => String, { nullable: true, description: WINDOW_TO }) to: string | null,
  ): Promise<UpcomingBookablesType> {
    const result = await upcomingBookables(ctx, ref, {
      extraRefs: refs ?? [],
      groupFormat: orUndefined(groupFormat),
      timeFormat: orUndefined(timeFormat),
      languageTag: orUndefined(languageTag),
      channelKey: orUndefined(channelKey),
      prdRef: orUndefined(prdRef),
      from: orUndefined(from),
      to: orUndefined(to),
    });
    return { groups: result.groups.map(([key, bookables]) => ({ key, bookables: bookables.map(toBookableType) })), publicVisible: result.publicVisible };
  }

  @Mutation(() => ReserveAppointmentPayload, { nullable: true, description: 'Holds one place for 3 minutes (REST POST /rest/1/resources/:ref/reserve_appointment).' })
  async reserveAppointment(
    @Ctx() ctx: Context,
    @Arg('ref', () => String) ref: string,
    @Arg('input', () => ReserveAppointmentInput) input: ReserveAppointmentInput,
    @Arg('refs', () => [String], { nullable: true, description: REFS }) refs: string[] | null,
    @Arg('channelKey', () => ChannelKey, { nullable: true, description: CHANNEL }) channelKey: ChannelKey | null,
  ): Promise<ReserveAppointmentPayload> {
    const { timeslotUuid, appointmentUuid, productUuid, from, to } = input;
    const body = { timeslot_uuid: timeslotUuid, appointment_uuid: appointmentUuid, product_uuid: productUuid, from: from.toISOString(), to: to.toISOString() };
    const result = await reserveAppointment(ctx, ref, body, { extraRefs: refs ?? [], channelKey: orUndefined(channelKey) });
    return camelKeys(toReserveView(result));
  }

  @Mutation(() => CreatedAppointmentType, { nullable: true, description: 'Completes a booking with the consumer’s data (REST POST /resources/:ref/create_appointment_with_consumer).' })
  async createAppointmentWithConsumer(
    @Ctx() ctx: Context,
    @Arg('ref', () => String) ref: string,
    @Arg('input', () => ConsumerBookingInput) input: ConsumerBookingInput,
    @Arg('refs', () => [String], { nullable: true, description: REFS }) refs: string[] | null,
    @Arg('timeFormat', () => String, { nullable: true, description: 'pattern of formattedStart/formattedEnd' }) timeFormat: string | null,
  ): Promise<CreatedAppointmentType> {
    const { timeslotUuid, productUuid, placeholderId, start, end, ...rest } = input;
    const body = { ...plain(rest), start: start.toISOString(), end: end.toISOString(), timeslot_uuid: timeslotUuid, product_uuid: productUuid, placeholder_id: placeholderId };
    const result = await createAppointmentWithConsumer(ctx, ref, body, { extraRefs: refs ?? [], timeFormat: orUndefined(timeFormat) });
    return camelKeys(await toCreatedAppointmentView(ctx, result));
  }

  @Query(() => [ActiveProductType], { description: 'Products offered on the channel (REST POST /products/active_products); refs or tslRefs required.' })
  async activeProducts(
    @Ctx() ctx: Context,
    @Arg('refs', () => [String], { nullable: true, description: 'resource references or UUIDs' }) refs: string[] | null,
    @Arg('tslRefs', () => [String], { nullable: true, description: 'timeslot or appointment references or UUIDs' }) tslRefs: string[] | null,
    @Arg('channelKey', () => ChannelKey, { nullable: true, description: CHANNEL }) channelKey: ChannelKey | null,
  ): Promise<ActiveProductType[]> {
    return activeProducts(ctx, { refs: refs ?? [], tslRefs: tslRefs ?? [], channelKey: orUndefined(channelKey) });
  }

  @Query(() => PublicDataType, { description: 'Public data of the first named resource (REST POST /resources/public_data); refs or tslRefs required.' })
  async publicData(
    @Ctx() ctx: Context,
    @Arg('refs', () => [String], { nullable: true, description: 'resource references or UUIDs' }) refs: string[] | null,
    @Arg('tslRefs', () => [String], { nullable: true, description: 'timeslot or appointment references or UUIDs' }) tslRefs: string[] | null,
    @Arg('channelKey', () => ChannelKey, { nullable: true, description: CHANNEL }) channelKey: ChannelKey | null,
  ): Promise<PublicDataType> {
    return publicData(ctx, { refs: refs ?? [], tslRefs: tslRefs ?? [], channelKey: orUndefined(channelKey) });
  }

  @Query(() => [BookingChannelType], { description: 'Every booking channel of a resource with its effective settings (CRM key required).' })
  async bookingChannels(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('resourceReference', () => String) resourceReference: string,
  ): Promise<BookingChannelType[]> {
    return listChannels(ctx, providerReference, resourceReference);
  }

  @Mutation(() => BookingChannelType, { nullable: true, description: 'Changes the given settings of one booking channel of a resource (CRM key required).' })
  async saveBookingChannel(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('resourceReference', () => String) resourceReference: string,
    @Arg('channelKey', () => ChannelKey) channelKey: ChannelKey,
    @Arg('input', () => BookingChannelInput) input: BookingChannelInput,
  ): Promise<BookingChannelType> {
    return saveChannel(ctx, providerReference, resourceReference, channelKey, plain(input));
  }
}
