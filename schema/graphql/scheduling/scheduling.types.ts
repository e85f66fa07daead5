import { GraphQLDateTime, GraphQLJSON } from 'graphql-scalars';
import { createUnionType, Field, Float, ID, InputType, Int, ObjectType } from 'type-graphql';
import { Connection } from '../connection.js';
import { AppointmentState, Currency, ParticipationState, TimeslotState, Weekday } from '../enums.js';
import { AddressType } from '../setup/setup.types.js';

const DATE_TIME_INPUT = 'ISO 8601; without offset (2027-03-01T08:00) it is wall-clock time in the provider’s time zone';
const LANGUAGE_CODE =
  'two-letter language code such as de, en or fr (de-DE is stored as de); a String because any language is kept; e-mails use it when it is de or en, else the booking’s or provider’s language';
const STABLE_ID = 'stable identity (the UUID), the key of normalized client caches';
const DATE_TIME_OUTPUT = 'an instant (UTC)';
const LOCATION_INPUT =
  'An address object {city, zip, street, number, country (or countryCode), two letters, default DE} or a non-empty string (free text, e.g. a video-meeting link)';

@ObjectType('TextLocation', { description: 'A place given as free text, e.g. a video-meeting link.' })
export class TextLocationType {
  @Field(() => String) text!: string;
}

/** Typed output for "address: object or string": clients select `... on Address` or `... on TextLocation`. */
export const LocationUnion = createUnionType({
  name: 'Location',
  description: 'Where a timeslot or appointment takes place: a postal address or free text.',
  types: () => [AddressType, TextLocationType] as const,
  resolveType: (value) => ('text' in value ? TextLocationType : AddressType),
});
export type LocationValue = AddressType | TextLocationType;

@ObjectType('Price')
export class PriceType {
  @Field(() => Float) value!: number;
  @Field(() => Currency) currency!: string;
}

@InputType('PriceInput')
export class PriceInput {
  @Field(() => Float, { description: 'at least 0' }) value!: number;
  @Field(() => Currency) currency!: Currency;
}

@ObjectType('Participation', { description: 'A customer’s place in an appointment; name, email and mobile come from the customer.' })
export class ParticipationType {
  @Field(() => ID, { name: 'id', description: 'stable identity (the participation’s UUID), the key of normalized client caches' }) uuid!: string;
  @Field(() => String, { nullable: true }) reference!: string | null;
  @Field(() => String) appointmentReference!: string;
  @Field(() => String, { nullable: true, description: 'null once the customer was erased' }) customerReference!: string | null;
  @Field(() => ParticipationState) state!: string;
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field(() => String, { nullable: true }) email!: string | null;
  @Field(() => String, { nullable: true }) mobile!: string | null;
  @Field(() => String, { nullable: true }) note!: string | null;
  @Field(() => [String], { nullable: true }) messages!: string[] | null;
}

@ObjectType('Appointment')
export class AppointmentType {
  @Field(() => ID, { description: STABLE_ID }) id!: string;
  @Field(() => ID) uuid!: string;
  @Field(() => String) reference!: string;
  @Field(() => GraphQLDateTime, { description: DATE_TIME_OUTPUT }) start!: string;
  @Field(() => GraphQLDateTime, { description: DATE_TIME_OUTPUT }) end!: string;
  @Field(() => Int, { description: 'max participants' }) capacity!: number;
  @Field(() => Boolean, { description: 'publicly bookable' }) acceptBookings!: boolean;
  @Field(() => String) resourceReference!: string;
  @Field(() => String, { nullable: true }) productReference!: string | null;
  @Field(() => String, { nullable: true, description: 'the appointment’s product name, else the product’s' }) productName!: string | null;
  @Field(() => String, { nullable: true, description: 'user reference of the responsible staff member' }) contactReference!: string | null;
  @Field(() => LocationUnion, { nullable: true }) address!: LocationValue | null;
  @Field(() => [ParticipationType]) participations!: ParticipationType[];
  @Field(() => PriceType, { nullable: true }) price!: PriceType | null;
  @Field(() => Boolean) archived!: boolean;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => String, { nullable: true }) notes!: string | null;
  @Field(() => String, { nullable: true, description: 'set for appointments created as a series' }) seriesId!: string | null;
  @Field(() => AppointmentState) state!: string;
}

@ObjectType('Timeslot', { description: 'Availability of a resource, cut into bookable slots of raster minutes.' })
export class TimeslotType {
  @Field(() => ID, { description: STABLE_ID }) id!: string;
  @Field(() => ID) uuid!: string;
  @Field(() => String) reference!: string;
  @Field(() => String) resourceReference!: string;
  @Field(() => GraphQLDateTime, { description: DATE_TIME_OUTPUT }) start!: string;
  @Field(() => GraphQLDateTime, { description: DATE_TIME_OUTPUT }) end!: string;
  @Field(() => Int, { description: 'length of one bookable slot in minutes' }) raster!: number;
  @Field(() => Int) defaultCapacity!: number;
  @Field(() => Boolean) defaultAcceptBookings!: boolean;
  @Field(() => LocationUnion, { nullable: true }) address!: LocationValue | null;
  @Field(() => TimeslotState) state!: string;
  @Field(() => [AppointmentType], { nullable: true, description: 'appointments already made from the timeslot (only in the timeslots query)' })
  appointments!: AppointmentType[] | null;
}

@InputType('TimeslotInput')
export class TimeslotInput {
  @Field(() => String, { nullable: true, description: 'unique; generated when omitted' }) reference?: string | null;
  @Field(() => String) resourceReference!: string;
  @Field(() => String, { nullable: true, description: `${DATE_TIME_INPUT}; default now` }) start?: string | null;
  @Field(() => String, { description: DATE_TIME_INPUT }) end!: string;
  @Field(() => Int, { description: 'minutes, greater than 0' }) raster!: number;
  @Field(() => Int, { description: 'greater than 0' }) defaultCapacity!: number;
  @Field(() => Boolean) defaultAcceptBookings!: boolean;
  @Field(() => GraphQLJSON, { nullable: true, description: LOCATION_INPUT }) address?: unknown;
  @Field(() => TimeslotState) state!: TimeslotState;
}

@InputType('TimeslotUpdateInput', { description: 'Only the fields given change; null clears the address.' })
export class TimeslotUpdateInput {
  @Field(() => String, { nullable: true, description: DATE_TIME_INPUT }) start?: string;
  @Field(() => String, { nullable: true, description: DATE_TIME_INPUT }) end?: string;
  @Field(() => Int, { nullable: true }) raster?: number;
  @Field(() => Int, { nullable: true }) defaultCapacity?: number;
  @Field(() => Boolean, { nullable: true }) defaultAcceptBookings?: boolean;
  @Field(() => GraphQLJSON, { nullable: true, description: LOCATION_INPUT }) address?: unknown;
  @Field(() => TimeslotState, { nullable: true }) state?: TimeslotState;
}

@InputType('AppointmentParticipationInput', { description: 'A participant of a new single appointment.' })
export class AppointmentParticipationInput {
  @Field(() => String) reference!: string;
  @Field(() => String, { description: 'participant name (the new customer’s userName)' }) name!: string;
  @Field(() => String, { description: 'finds the provider’s customer, or creates one' }) email!: string;
  @Field(() => String, { nullable: true }) mobile?: string | null;
  @Field(() => String, { nullable: true }) note?: string | null;
  @Field(() => ParticipationState) state!: ParticipationState;
}

@InputType('AppointmentInput', { description: 'A single appointment.' })
export class AppointmentInput {
  @Field(() => String) reference!: string;
  @Field(() => String, { description: DATE_TIME_INPUT }) start!: string;
  @Field(() => String, { description: DATE_TIME_INPUT }) end!: string;
  @Field(() => String) resourceReference!: string;
  @Field(() => String) productReference!: string;
  @Field(() => Int, { nullable: true, description: 'default 0' }) capacity?: number | null;
  @Field(() => Boolean, { nullable: true, description: 'default false' }) acceptBookings?: boolean | null;
  @Field(() => String, { nullable: true }) productName?: string | null;
  @Field(() => String, { nullable: true, description: 'user reference of a staff member; required with contactProfileReference' })
  contactReference?: string | null;
  @Field(() => String, { nullable: true }) contactProfileReference?: string | null;
  @Field(() => GraphQLJSON, { nullable: true, description: `${LOCATION_INPUT}; default the resource’s address` }) address?: unknown;
  @Field(() => PriceInput, { nullable: true }) price?: PriceInput | null;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String, { nullable: true }) notes?: string | null;
  @Field(() => Boolean, { nullable: true, description: 'default false' }) archived?: boolean | null;
  @Field(() => [AppointmentParticipationInput], {
    nullable: true,
    description: 'created with the appointment by the rules of createParticipation; the customer is found or created by e-mail',
  })
  participations?: AppointmentParticipationInput[] | null;
}

@InputType('SeriesDataInput')
export class SeriesDataInput {
  @Field(() => String, { description: `start of the period; ${DATE_TIME_INPUT}` }) from!: string;
  @Field(() => String, { description: 'end of the period' }) to!: string;
  @Field(() => Int, { description: 'length of each appointment in minutes' }) raster!: number;
  @Field(() => [Weekday], { nullable: true, description: 'required when the period spans more than one day' })
  weekdays?: Weekday[] | null;
}

@InputType('AppointmentSeriesInput', { description: 'A series; references are generated and all appointments share one seriesId.' })
export class AppointmentSeriesInput {
  @Field(() => String, { nullable: true, description: 'start of the daily window (its wall-clock time counts); default series_data.from' })
  from?: string | null;
  @Field(() => String, { nullable: true, description: 'end of the daily window; default series_data.to' }) to?: string | null;
  @Field(() => String) resourceReference!: string;
  @Field(() => String) productReference!: string;
  @Field(() => Int, { nullable: true, description: 'default 0' }) capacity?: number | null;
  @Field(() => Boolean, { nullable: true, description: 'default false' }) acceptBookings?: boolean | null;
  @Field(() => String, { nullable: true }) productName?: string | null;
  @Field(() => String, { nullable: true }) contactReference?: string | null;
  @Field(() => String, { nullable: true }) contactProfileReference?: string | null;
  @Field(() => GraphQLJSON, { nullable: true, description: LOCATION_INPUT }) address?: unknown;
  @Field(() => PriceInput, { nullable: true }) price?: PriceInput | null;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String, { nullable: true }) notes?: string | null;
  @Field(() => SeriesDataInput) series_data!: SeriesDataInput;
}

@ObjectType('AppointmentSeries')
export class AppointmentSeriesType {
  @Field(() => String) seriesId!: string;
  @Field(() => [AppointmentType]) appointments!: AppointmentType[];
}

@InputType('ParticipationInput')
export class ParticipationInput {
  @Field(() => String) reference!: string;
  @Field(() => String) appointmentReference!: string;
  @Field(() => String) customerReference!: string;
  @Field(() => ParticipationState) state!: ParticipationState;
  @Field(() => String, { nullable: true, description: 'text for the e-mail to the customer, at most 1024 characters' }) message?: string | null;
}

@ObjectType('CreateParticipationPayload')
export class CreateParticipationPayload {
  @Field(() => ParticipationType) participation!: ParticipationType;
  @Field(() => Boolean, { description: 'true when created (REST 201); false when an existing reference was updated (REST 200)' })
  created!: boolean;
}

@ObjectType('Customer')
export class CustomerType {
  @Field(() => String) customerReference!: string;
  @Field(() => String) providerReference!: string;
  @Field(() => String) userName!: string;
  @Field(() => String, { nullable: true }) email!: string | null;
  @Field(() => String, { nullable: true }) mobile!: string | null;
  @Field(() => String, { nullable: true, description: 'internal note' }) note!: string | null;
  @Field(() => String, { nullable: true, description: LANGUAGE_CODE }) language!: string | null;
}

@InputType('CustomerInput')
export class CustomerInput {
  @Field(() => String) customerReference!: string;
  @Field(() => String, { description: 'must equal the providerReference argument' }) providerReference!: string;
  @Field(() => String) userName!: string;
  @Field(() => String, { nullable: true }) email?: string | null;
  @Field(() => String, { nullable: true, description: 'with international prefix, e.g. +49 170 1234567' }) mobile?: string | null;
  @Field(() => String, { nullable: true, description: 'at most 1023 characters' }) note?: string | null;
  @Field(() => String, { nullable: true, description: LANGUAGE_CODE }) language?: string | null;
}

@InputType('CustomerUpdateInput', { description: 'Only the fields given change; customerReference and userName can be changed but never to null or empty.' })
export class CustomerUpdateInput {
  @Field(() => String, { nullable: true }) customerReference?: string;
  @Field(() => String, { nullable: true }) userName?: string;
  @Field(() => String, { nullable: true }) email?: string | null;
  @Field(() => String, { nullable: true }) mobile?: string | null;
  @Field(() => String, { nullable: true }) note?: string | null;
  @Field(() => String, { nullable: true, description: LANGUAGE_CODE }) language?: string | null;
}

@ObjectType('CreateCustomerPayload')
export class CreateCustomerPayload {
  @Field(() => CustomerType) customer!: CustomerType;
  @Field(() => Boolean, { description: 'true when created (REST 201); false when the reference existed (REST 200, unchanged)' })
  created!: boolean;
}

@ObjectType('AppointmentConnection', { description: 'A page of appointments, oldest start first.' })
export class AppointmentConnection extends Connection(AppointmentType, 'Appointment') {}

@ObjectType('TimeslotConnection', { description: 'A page of timeslots, by start.' })
export class TimeslotConnection extends Connection(TimeslotType, 'Timeslot') {}
