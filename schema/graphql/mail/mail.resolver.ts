import { Arg, Ctx, Query, Resolver } from 'type-graphql';
import type { Context } from '../../../services/kernel/context.js';
import { mailDeliveriesOfParticipation } from '../../../services/mail/mail-delivery.service.js';
import { mailTemplateOf } from '../enums.js';
import { MailDeliveryType } from './mail.types.js';

/** Delivery status of the e-mails about a participation; needs the CRM key. */
@Resolver()
export class MailResolver {
  @Query(() => [MailDeliveryType], { description: 'Every e-mail about the participation, oldest first, with its delivery state.' })
  async mailDeliveries(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('participationReference', () => String) participationReference: string,
  ): Promise<MailDeliveryType[]> {
    const deliveries = await mailDeliveriesOfParticipation(ctx, providerReference, participationReference);
    return deliveries.map((delivery) => ({ ...delivery, template: mailTemplateOf(delivery.template), updatedAt: delivery.updatedAt.toISOString() }));
  }
}
