import { WEBHOOK_EVENT_TYPES } from '../../services/webhooks/webhook-events.js';
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, toWebhookDeliveryView, toWebhookView, webhookInput } from '../../services/webhooks/webhook.service.js';
import { noContent, ok, type Route, wrap } from './http.js';
import { createdWebhookView, webhookDeliveryView, webhookView, wrapped } from './openapi/response-schemas.js';
import { z } from './openapi/zod-openapi.js';

const tag = 'Webhooks';

/** Extension: webhooks for CRMs (events of the `appointmentChanged` subscription, signed, retried). */
export const webhookRoutes: Route[] = [
  {
    method: 'post',
    path: '/crms/:crmId/webhooks',
    auth: 'crm',
    doc: {
      tag,
      summary: 'Register a webhook',
      description:
        `Deliveries are POSTed with \`X-Booking-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">\` (key: the secret of this answer, shown only here), ` +
        `\`X-Booking-Delivery\` (the id to de-duplicate by) and \`X-Booking-Event\`; any 2xx is success, anything else is retried with exponential back-off for about 34 hours. ` +
        `Event types: ${WEBHOOK_EVENT_TYPES.join(', ')}. The URL must use https (http only for localhost, outside production).`,
      body: webhookInput,
      example: { url: 'https://crm.example.com/booking-events', events: ['participation.added', 'participation.state_changed'], description: 'CRM sync' },
      responses: { 201: { description: 'registered; the secret is shown only now', json: wrapped('webhook', createdWebhookView) } },
    },
    async handle(ctx, req) {
      const { webhook, secret } = await createWebhook(ctx, req.body);
      return ok(wrap('webhook', { ...toWebhookView(webhook), secret }), 201);
    },
  },
  {
    method: 'get',
    path: '/crms/:crmId/webhooks',
    auth: 'crm',
    doc: { tag, summary: "List the CRM's webhooks", responses: { 200: { description: 'the webhooks (without secrets)', json: z.array(webhookView) } } },
    handle: async (ctx) => ok((await listWebhooks(ctx)).map(toWebhookView)),
  },
  {
    method: 'delete',
    path: '/crms/:crmId/webhooks/:webhookId',
    auth: 'crm',
    doc: { tag, summary: 'Remove a webhook', description: 'Deliveries not yet made are dropped.', responses: { 204: { description: 'removed' } } },
    async handle(ctx, req) {
      await deleteWebhook(ctx, req.params.webhookId!);
      return noContent();
    },
  },
  {
    method: 'get',
    path: '/crms/:crmId/webhooks/:webhookId/deliveries',
    auth: 'crm',
    doc: {
      tag,
      summary: 'The latest deliveries of a webhook, with their attempts',
      description: 'At most 100, newest first.',
      responses: { 200: { description: 'the deliveries', json: z.array(webhookDeliveryView) } },
    },
    handle: async (ctx, req) => ok((await listDeliveries(ctx, req.params.webhookId!)).map(toWebhookDeliveryView)),
  },
];
