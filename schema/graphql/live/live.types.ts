import { Field, Int, ObjectType } from 'type-graphql';

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
  @Field(() => String, {
    description: 'PARTICIPATION_ADDED, PARTICIPATION_STATE_CHANGED, HOLD_EXPIRED, APPOINTMENT_CANCELLED or APPOINTMENT_DELETED',
  })
  change!: string;
  @Field(() => String) providerReference!: string;
  @Field(() => String) appointmentUuid!: string;
  @Field(() => String) appointmentReference!: string;
  @Field(() => String, { description: 'ACTIVE or CANCELLED' }) appointmentState!: string;
  @Field(() => String, { nullable: true }) participationUuid!: string | null;
  @Field(() => String, { nullable: true, description: 'null for booking-flow participations' }) participationReference!: string | null;
  @Field(() => String, { nullable: true, description: 'the participation’s state after the change' }) state!: string | null;
  @Field(() => String, { nullable: true }) previousState!: string | null;
  @Field(() => String) at!: string;
}
