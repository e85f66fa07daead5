import { GraphQLDateTime } from 'graphql-scalars';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { Connection } from '../connection.js';
import type { WebhookEventType } from '../../../services/webhooks/webhook-events.js';
import type { WebhookDeliveryStatus } from '../../../services/webhooks/webhook.entity.js';
import { AppointmentChangeKind, WebhookDeliveryStatus as WebhookDeliveryStatusEnum } from '../enums.js';

// GraphQL names are the changes of appointmentChanged (PARTICIPATION_STATE_CHANGED); REST and the bodies use participation.state_changed.

@ObjectType('Webhook', { description: 'An endpoint of the CRM that receives signed events (REST: /crms/{crmId}/webhooks).' })
export class WebhookType {
  @Field(() => ID) id!: string;
  @Field(() => String) url!: string;
  @Field(() => [AppointmentChangeKind], { description: 'Event types it receives' }) events!: WebhookEventType[];
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => GraphQLDateTime, { description: 'ISO 8601, UTC' }) createdAt!: string;
}

@ObjectType('WebhookAttempt', { description: 'One attempt to deliver an event.' })
export class WebhookAttemptType {
  @Field(() => GraphQLDateTime, { description: 'ISO 8601, UTC' }) at!: string;
  @Field(() => Int, { nullable: true, description: 'HTTP status of the answer; null when none came' }) statusCode!: number | null;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => Int) durationMs!: number;
}

@ObjectType('WebhookDelivery', { description: 'One event for one webhook, with every attempt.' })
export class WebhookDeliveryType {
  @Field(() => ID, { description: 'Delivery id: `id` of the body and X-Booking-Delivery, the same on every retry' }) id!: string;
  @Field(() => String) eventId!: string;
  @Field(() => AppointmentChangeKind) type!: WebhookEventType;
  @Field(() => WebhookDeliveryStatusEnum) status!: WebhookDeliveryStatus;
  @Field(() => [WebhookAttemptType]) attempts!: WebhookAttemptType[];
  @Field(() => GraphQLDateTime, { nullable: true }) nextAttemptAt!: string | null;
  @Field(() => GraphQLDateTime) createdAt!: string;
  @Field(() => GraphQLDateTime, { nullable: true }) deliveredAt!: string | null;
  @Field(() => String, { description: 'The JSON body exactly as sent and signed' }) body!: string;
}

@ObjectType('WebhookDeliveryConnection', { description: 'A page of deliveries, newest first.' })
export class WebhookDeliveryConnection extends Connection(WebhookDeliveryType, 'WebhookDelivery') {}
