import { Arg, Ctx, Int, Query, Resolver } from 'type-graphql';
import type { Context } from '../../../services/kernel/context.js';
import { PAGE_SIZE_DEFAULT } from '../../../services/kernel/pagination.js';
import { DELIVERY_LIST_MAX, listDeliveries, listWebhooks, toWebhookDeliveryView, toWebhookView } from '../../../services/webhooks/webhook.service.js';
import { toConnection } from '../connection.js';
import { WebhookDeliveryConnection, WebhookType } from './webhook.types.js';

/** The CRM's webhooks and their deliveries; needs the CRM key. Registering one is REST (it answers the secret once). */
@Resolver()
export class WebhookResolver {
  @Query(() => [WebhookType], { description: "The CRM's webhooks, oldest first." })
  async webhooks(@Ctx() ctx: Context): Promise<WebhookType[]> {
    return (await listWebhooks(ctx)).map(toWebhookView);
  }

  @Query(() => WebhookDeliveryConnection, { description: 'A page of the deliveries of a webhook, newest first, with their attempts.' })
  async webhookDeliveries(
    @Ctx() ctx: Context,
    @Arg('webhookId', () => String) webhookId: string,
    @Arg('first', () => Int, { defaultValue: PAGE_SIZE_DEFAULT, description: `1..${DELIVERY_LIST_MAX}` }) first: number,
    @Arg('after', () => String, { nullable: true, description: 'endCursor of the previous page' }) after: string | null,
  ): Promise<WebhookDeliveryConnection> {
    return toConnection(await listDeliveries(ctx, webhookId, { first, after }), toWebhookDeliveryView);
  }
}
