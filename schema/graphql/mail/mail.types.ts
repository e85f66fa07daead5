import { GraphQLDateTime } from 'graphql-scalars';
import { Field, Int, ObjectType } from 'type-graphql';
import { MailDeliveryStatus, MailTemplate } from '../enums.js';

@ObjectType('MailDelivery', { description: 'The state of one e-mail the service sent, or tried to send, about a participation.' })
export class MailDeliveryType {
  @Field(() => MailTemplate, { description: 'which e-mail it is' }) template!: MailTemplate;
  @Field(() => String, { nullable: true, description: 'Address written to; null until the mail is rendered; "erased" after the customer was deleted' })
  recipient!: string | null;
  @Field(() => MailDeliveryStatus) status!: `${MailDeliveryStatus}`;
  @Field(() => Int, { description: 'Delivery attempts started so far' }) attempts!: number;
  @Field(() => String, { nullable: true, description: 'Reason of the last failure (for FAILED: why it was given up)' }) lastError!: string | null;
  @Field(() => GraphQLDateTime, { description: 'When the state last changed (ISO 8601, UTC)' }) updatedAt!: string;
}
