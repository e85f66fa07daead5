import { Field, Int, ObjectType } from 'type-graphql';
import { AppointmentChangeKind, AppointmentState, ParticipationState } from '../enums.js';
import type { WebhookEventType } from '../../../services/webhooks/webhook-events.js';

@ObjectType('CapacityChange', {
  description:
    'A slot as upcoming_bookables now shows it (same snake_case fields and numbers). capacity_left 0 means the slot is no longer bookable ' +
    '(full, cancelled, closed, deleted). A slot is identified by resource_uuid + start + end; replace what you show for it. ' +
    'scope "timeslot" (rare: a timeslot change covering more than 500 slots) means: refetch upcoming_bookables for [start, end).',
})
export class CapacityChangeType {
  @Field(() => String, { description: 'slot or timeslot' }) scope!: string;
  @Field(() => String) resource_uuid!: string;
  @Field(() => String, { nullable: true }) timeslot_uuid!: string | null;
  @Field(() => String, { nullable: true, description: 'set for kind models.LotAppointment' }) appointment_uuid!: string | null;
  @Field(() => String, { nullable: true }) product_uuid!: string | null;
  @Field(() => String, { description: 'models.Bookable or models.LotAppointment' }) kind!: string;
  @Field(() => String, { description: 'ISO 8601 with the provider’s offset' }) start!: string;
  @Field(() => String, { description: 'ISO 8601 with the provider’s offset' }) end!: string;
  @Field(() => Int) capacity!: number;
  @Field(() => Int) capacity_left!: number;
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
  @Field(() => String) at!: string;
}
