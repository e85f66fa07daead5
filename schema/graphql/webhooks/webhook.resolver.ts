import { Arg, Ctx, Query, Resolver } from 'type-graphql';
import type { Context } from '../../../services/kernel/context.js';
import { listDeliveries, listWebhooks, toWebhookDeliveryView, toWebhookView } from '../../../services/webhooks/webhook.service.js';
import { WebhookDeliveryType, WebhookType } from './webhook.types.js';

/** The CRM's webhooks and their deliveries; needs the CRM key. Registering one is REST (it answers the secret once). */
@Resolver()
export class WebhookResolver {
  @Query(() => [WebhookType], { description: "The CRM's webhooks, oldest first." })
  async webhooks(@Ctx() ctx: Context): Promise<WebhookType[]> {
    return (await listWebhooks(ctx)).map(toWebhookView);
  }

  @Query(() => [WebhookDeliveryType], { description: 'The latest deliveries of a webhook (at most 100, newest first), with their attempts.' })
  async webhookDeliveries(@Ctx() ctx: Context, @Arg('webhookId', () => String) webhookId: string): Promise<WebhookDeliveryType[]> {
    return (await listDeliveries(ctx, webhookId)).map(toWebhookDeliveryView);
  }
}
