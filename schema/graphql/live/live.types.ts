import { GraphQLDateTime } from 'graphql-scalars';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { BookableType } from '../booking/booking.types.js';
import { AppointmentChangeKind, AppointmentState, ParticipationState } from '../enums.js';
import type { WebhookEventType } from '../../../services/webhooks/webhook-events.js';

/** What a capacity change is about (internal values: the feed's scope names). */
export enum CapacityChangeScope {
  SLOT = 'slot',
  PERIOD = 'timeslot',
}

registerEnumType(CapacityChangeScope, {
  name: 'CapacityChangeScope',
  description: 'What a CapacityChange is about',
  valuesConfig: {
    SLOT: { description: 'one slot; `bookable` is that slot as upcomingBookables now shows it' },
    PERIOD: { description: 'a timeslot change too large to list slot by slot (over 500 slots): refetch upcomingBookables for [from, to)' },
  },
});

@ObjectType('CapacityChange', {
  description:
    'A change of the capacity of a resource’s slots. For scope SLOT, `bookable` is the slot as upcomingBookables now shows it: the same ' +
    'type and `id`, so a normalized client cache (Apollo Client, urql, Relay) updates a listing it holds without merge code. ' +
    'capacityLeft 0 means the slot is no longer bookable (full, cancelled, closed, deleted). A slot that was not in a listing ' +
    '(e.g. freed by a cancellation) arrives here too; add it or refetch.',
})
export class CapacityChangeType {
  @Field(() => CapacityChangeScope) scope!: CapacityChangeScope;
  @Field(() => ID, { description: 'the resource whose slots changed' }) resourceUuid!: string;
  @Field(() => GraphQLDateTime, { description: 'start of the slot, or of the period to refetch' }) from!: string;
  @Field(() => GraphQLDateTime, { description: 'end of the slot, or of the period to refetch' }) to!: string;
  @Field(() => BookableType, { nullable: true, description: 'the slot now (scope SLOT); null for scope PERIOD' }) bookable!: BookableType | null;
}

@ObjectType('AppointmentChange', { description: 'A change of one of the provider’s appointments. Instants in UTC.' })
export class AppointmentChangeType {
  @Field(() => AppointmentChangeKind, { description: 'what happened' }) change!: WebhookEventType;
  @Field(() => String) providerReference!: string;
  @Field(() => String) appointmentUuid!: string;
  @Field(() => String) appointmentReference!: string;
  @Field(() => AppointmentState, { description: 'the appointment’s state after the change (CANCELLED for a deleted one)' }) appointmentState!: string;
  @Field(() => String, { nullable: true }) participationUuid!: string | null;
  @Field(() => String, { nullable: true, description: 'null for booking-flow participations' }) participationReference!: string | null;
  @Field(() => ParticipationState, { nullable: true, description: 'the participation’s state after the change; null for appointment-wide changes and an expired hold' })
  state!: string | null;
  @Field(() => ParticipationState, { nullable: true, description: 'the participation’s state before the change; null for an added participation and appointment-wide changes' }) previousState!: string | null;
  @Field(() => GraphQLDateTime) at!: string;
}
