import { GraphQLDateTime } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { AppointmentState, BookableKind, BookingProcess, ChannelKey, ContactChannelType, ParticipationState } from '../enums.js';

/**
 * GraphQL types of the public booking flow. Field names are the REST names in
 * camelCase (`timeslot_uuid` → `timeslotUuid`, `capacity_left` →
 * `capacityLeft`, `customer_fullName` → `customerFullName`); names without an
 * underscore (`formatedAddress`, `participationState`, `cancelLink`) are the
 * same. See `camelKeys` in booking.resolver.ts.
 */

const WITH_OFFSET = 'an instant (UTC); formattedStart/formattedEnd show it in the provider’s time zone';

@ObjectType('BookingContactChannel', { description: 'The contact shown to consumers: the first customer-visible channel (mobile, phone, email).' })
export class BookingContactChannelType {
  @Field(() => ContactChannelType, { description: 'MOBILE, PHONE or EMAIL' }) type!: string;
  @Field(() => String) value!: string;
}

@ObjectType('BookableProduct')
export class BookableProductType {
  @Field(() => ID) uuid!: string;
  @Field(() => String) name!: string;
}

@ObjectType('Bookable', { description: 'A slot a consumer can book (REST: one entry of upcoming_bookables).' })
export class BookableType {
  @Field(() => ID, {
    description: 'the slot’s stable identity (resource, start and end), the same in upcomingBookables and capacityChanged: the key of normalized client caches',
  })
  id!: string;
  @Field(() => GraphQLDateTime, { description: WITH_OFFSET }) start!: string;
  @Field(() => GraphQLDateTime, { description: WITH_OFFSET }) end!: string;
  @Field(() => String, { description: 'start formatted by timeFormat' }) formattedStart!: string;
  @Field(() => String, { description: 'end formatted by timeFormat' }) formattedEnd!: string;
  @Field(() => ID, { nullable: true, description: 'REST timeslot_uuid; use it to reserve a BOOKABLE' }) timeslotUuid!: string | null;
  @Field(() => ID, { nullable: true, description: 'REST appointment_uuid; set for a LOT_APPOINTMENT' }) appointmentUuid!: string | null;
  @Field(() => ID, { nullable: true, description: 'REST product_uuid; set when exactly one product applies' }) productUuid!: string | null;
  @Field(() => ID, { description: 'REST resource_uuid' }) resourceUuid!: string;
  @Field(() => String, { nullable: true, description: 'REST product_name' }) productName!: string | null;
  @Field(() => String, { description: 'REST resource_name' }) resourceName!: string;
  @Field(() => BookingContactChannelType, { nullable: true, description: 'REST contact_channel' }) contactChannel!: BookingContactChannelType | null;
  @Field(() => Int) capacity!: number;
  @Field(() => Int, { description: 'REST capacity_left: capacity minus booked, requested and live held places' }) capacityLeft!: number;
  @Field(() => [BookableProductType]) products!: BookableProductType[];
  @Field(() => BookableKind) kind!: string;
}

@ObjectType('BookableGroup', { description: 'Bookables whose start formats to the same groupFormat value (REST: one key of the answer).' })
export class BookableGroupType {
  @Field(() => String) key!: string;
  @Field(() => [BookableType]) bookables!: BookableType[];
}

@ObjectType('UpcomingBookables', { description: 'REST answers 204 where groups is empty.' })
export class UpcomingBookablesType {
  @Field(() => [BookableGroupType]) groups!: BookableGroupType[];
  @Field(() => Boolean, { description: 'REST public_visible: the channel is visible and the resource not archived' }) publicVisible!: boolean;
}

@InputType('ReserveAppointmentInput', { description: 'REST body of reserve_appointment in camelCase.' })
export class ReserveAppointmentInput {
  @Field(() => ID, { nullable: true, description: 'REST timeslot_uuid, for a BOOKABLE' }) timeslotUuid?: string | null;
  @Field(() => ID, { nullable: true, description: 'REST appointment_uuid, for a LOT_APPOINTMENT' }) appointmentUuid?: string | null;
  @Field(() => ID, { description: 'REST product_uuid' }) productUuid!: string;
  @Field(() => GraphQLDateTime, { description: 'slot start: the start of the Bookable' }) from!: Date;
  @Field(() => GraphQLDateTime, { description: 'slot end: the end of the Bookable' }) to!: Date;
}

@ObjectType('ReservedParticipation')
export class ReservedParticipationType {
  @Field(() => ID) uuid!: string;
  @Field(() => ID) appointmentUuid!: string;
  @Field(() => ID, { nullable: true }) timeslotUuid!: string | null;
  @Field(() => ID) resourceUuid!: string;
  @Field(() => ID, { nullable: true }) productUuid!: string | null;
  @Field(() => GraphQLDateTime, { description: WITH_OFFSET }) from!: string;
  @Field(() => GraphQLDateTime, { description: WITH_OFFSET }) to!: string;
  @Field(() => Int) appointmentCapacity!: number;
  @Field(() => Int) appointmentCapacityLeft!: number;
  @Field(() => ID, { description: 'pass it as placeholderId when completing the booking' }) customerUuid!: string;
  @Field(() => String, { nullable: true }) customerMobile!: string | null;
  @Field(() => String, { nullable: true }) customerFullName!: string | null;
  @Field(() => String, { nullable: true }) customerEmail!: string | null;
  @Field(() => String, { nullable: true }) customerNote!: string | null;
  @Field(() => ParticipationState, { description: 'RESERVED' }) state!: string;
  @Field(() => String, { nullable: true, description: 'the address on one line (the REST spelling)' }) formatedAddress!: string | null;
  @Field(() => [String]) messages!: string[];
}

@ObjectType('ReservedCustomer')
export class ReservedCustomerType {
  @Field(() => ID) customerPlaceholderId!: string;
  @Field(() => ID) customerUuid!: string;
  @Field(() => ParticipationState) participationState!: string;
  @Field(() => ID) participationId!: string;
}

@ObjectType('ReservedAppointment')
export class ReservedAppointmentType {
  @Field(() => ID) uuid!: string;
  @Field(() => BookableKind, { description: 'LOT_APPOINTMENT' }) kind!: string;
  @Field(() => ID, { nullable: true }) productId!: string | null;
  @Field(() => String, { nullable: true }) productName!: string | null;
  @Field(() => ID) resourceId!: string;
  @Field(() => GraphQLDateTime, { description: WITH_OFFSET }) from!: string;
  @Field(() => GraphQLDateTime, { description: WITH_OFFSET }) to!: string;
  @Field(() => AppointmentState) state!: string;
  @Field(() => Int) capacity!: number;
  @Field(() => Int) capacityLeft!: number;
  @Field(() => [ReservedCustomerType], { description: 'only the caller’s own hold' }) customers!: ReservedCustomerType[];
}

@ObjectType('ReserveAppointmentPayload', { description: 'REST: {api-info, participation, appointments}.' })
export class ReserveAppointmentPayload {
  @Field(() => ReservedParticipationType) participation!: ReservedParticipationType;
  @Field(() => [ReservedAppointmentType]) appointments!: ReservedAppointmentType[];
}

@InputType('ConsumerBookingInput', { description: 'REST body of create_appointment_with_consumer; snake_case names in camelCase.' })
export class ConsumerBookingInput {
  @Field(() => GraphQLDateTime, { description: 'slot start: the start of the Bookable' }) start!: Date;
  @Field(() => GraphQLDateTime, { description: 'slot end' }) end!: Date;
  @Field(() => ID, { description: 'REST timeslot_uuid: the timeslot or the appointment UUID' }) timeslotUuid!: string;
  @Field(() => ID, { nullable: true, description: 'REST product_uuid' }) productUuid?: string | null;
  @Field(() => ID, { nullable: true, description: 'REST placeholder_id: customerUuid of the own reservation' }) placeholderId?: string | null;
  @Field(() => String) email!: string;
  @Field(() => String) firstname!: string;
  @Field(() => String) lastname!: string;
  @Field(() => String, { nullable: true, description: 'with international prefix' }) mobile?: string | null;
  @Field(() => String, { nullable: true, description: 'at most 1024 characters' }) message?: string | null;
  @Field(() => String, {
    nullable: true,
    description: 'language of the consumer: two letters (de, en-GB, …); a String because any language is accepted: it formats formattedStart/formattedEnd, e-mails use it when it is de or en',
  })
  locale?: string | null;
  @Field(() => ChannelKey, { nullable: true, description: 'default RESOURCE_PUBLIC' }) channelKey?: ChannelKey | null;
}

@ObjectType('CreatedAppointment', { description: 'REST createdAppointment in camelCase.' })
export class CreatedAppointmentType {
  @Field(() => ID) appointmentUuid!: string;
  @Field(() => GraphQLDateTime, { description: WITH_OFFSET }) start!: string;
  @Field(() => GraphQLDateTime, { description: WITH_OFFSET }) end!: string;
  @Field(() => String, { description: 'start formatted by timeFormat' }) formattedStart!: string;
  @Field(() => String, { description: 'end formatted by timeFormat' }) formattedEnd!: string;
  @Field(() => ID, { nullable: true }) timeslotUuid!: string | null;
  @Field(() => ID, { nullable: true }) productUuid!: string | null;
  @Field(() => ID) resourceUuid!: string;
  @Field(() => BookingContactChannelType, { nullable: true }) contactChannel!: BookingContactChannelType | null;
  @Field(() => String, { nullable: true }) productName!: string | null;
  @Field(() => String) resourceName!: string;
  @Field(() => Int) capacity!: number;
  @Field(() => Int) capacityLeft!: number;
  @Field(() => [BookableProductType]) products!: BookableProductType[];
  @Field(() => BookableKind) kind!: string;
  @Field(() => String, { description: 'signed URL with which the consumer cancels this booking alone' }) cancelLink!: string;
}

@ObjectType('ActiveProduct')
export class ActiveProductType {
  @Field(() => ID) uuid!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => Int, { nullable: true }) minDuration!: number | null;
  @Field(() => Int, { nullable: true }) maxDuration!: number | null;
  @Field(() => Int, { nullable: true }) leadTimeMinutes!: number | null;
  @Field(() => Int, { nullable: true }) followUpTimeMinutes!: number | null;
  @Field(() => Boolean, { description: 'offered only on the channels that mark it exclusive' }) exclusive!: boolean;
}

@ObjectType('PublicContact')
export class PublicContactType {
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field(() => String, { nullable: true }) email!: string | null;
  @Field(() => String, { nullable: true }) mobile!: string | null;
  @Field(() => String, { nullable: true }) phone!: string | null;
}

@ObjectType('PublicResource')
export class PublicResourceType {
  @Field(() => ID) uuid!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => ContactChannelType, { nullable: true, description: 'type of the contact channel shown (MOBILE, PHONE or EMAIL)' }) contactChannelType!: string | null;
  @Field(() => String, { nullable: true }) msgHelpText!: string | null;
  @Field(() => String, { nullable: true }) url!: string | null;
  @Field(() => String, { nullable: true }) imgUrl!: string | null;
}

@ObjectType('PublicProvider')
export class PublicProviderType {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => Boolean) isThemingAllowed!: boolean;
  @Field(() => Boolean) isLocalisationAllowed!: boolean;
  @Field(() => Boolean) areCustomFieldsAllowed!: boolean;
}

@ObjectType('PublicChannel')
export class PublicChannelType {
  @Field(() => BookingProcess) bookingProcess!: string;
}

@ObjectType('PublicData', { description: 'What a booking page shows about a resource, its contact, provider and channel.' })
export class PublicDataType {
  @Field(() => PublicContactType) contact!: PublicContactType;
  @Field(() => PublicResourceType) resource!: PublicResourceType;
  @Field(() => PublicProviderType) provider!: PublicProviderType;
  @Field(() => PublicChannelType) channel!: PublicChannelType;
}

@ObjectType('BookingChannel', { description: 'How one booking channel behaves for a resource; products by reference.' })
export class BookingChannelType {
  @Field(() => ChannelKey) channelKey!: string;
  @Field(() => Boolean) visible!: boolean;
  @Field(() => BookingProcess) bookingProcess!: string;
  @Field(() => [String], { nullable: true, description: 'product references offered; null offers every product of the resource' }) products!: string[] | null;
  @Field(() => [String], { description: 'product references offered only on channels that list them here' }) exclusiveProducts!: string[];
  @Field(() => [String], { description: 'RESOURCE_EXCLUSIVE: customer references allowed to book' }) acceptedCustomers!: string[];
}

@InputType('BookingChannelInput', { description: 'Only the fields given change; products: null offers every product again.' })
export class BookingChannelInput {
  @Field(() => Boolean, { nullable: true }) visible?: boolean;
  @Field(() => BookingProcess, { nullable: true }) bookingProcess?: BookingProcess;
  @Field(() => [String], { nullable: true }) products?: string[] | null;
  @Field(() => [String], { nullable: true }) exclusiveProducts?: string[];
  @Field(() => [String], { nullable: true }) acceptedCustomers?: string[];
}
