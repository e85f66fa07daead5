import { randomBytes } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { z } from 'zod';
import { type Context, requireCrm } from '../kernel/context.js';
import { notFound, validationError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import { type Keyset, keysetPage, type Page, type PageRequest, pageSize } from '../kernel/pagination.js';
import { optionalText, parseInput } from '../kernel/validation.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhook-events.js';
import { type WebhookAttempt, Webhook, WebhookDelivery, type WebhookDeliveryStatus } from './webhook.entity.js';

/** Hosts an endpoint may use plain HTTP on, outside production (a receiver on the developer's machine). */
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Addresses of the service's own network, which a CRM's endpoint may not name in production. */
const INTERNAL_ADDRESSES = new BlockList();
for (const [network, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.168.0.0', 16]] as const) {
  INTERNAL_ADDRESSES.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [['::', 127], ['fc00::', 7], ['fe80::', 10]] as const) INTERNAL_ADDRESSES.addSubnet(network, prefix, 'ipv6');

/** Whether a URL's host is this machine or a private network by its very name (names that resolve there are not caught). */
function namesInternalHost(hostname: string): boolean {
  // `localhost.` is the same name written fully qualified (DNS roots every name in the empty label).
  const host = hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const family = isIP(host);
  return family !== 0 && INTERNAL_ADDRESSES.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

export const webhookInput = z.object({
  url: z.string().trim().max(2048).url(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1).max(WEBHOOK_EVENT_TYPES.length * 4),
  description: optionalText(),
});

export interface WebhookView {
  id: string;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  createdAt: string;
}

export interface WebhookDeliveryView {
  id: string;
  eventId: string;
  type: WebhookEventType;
  status: WebhookDeliveryStatus;
  attempts: WebhookAttempt[];
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
  /** The body exactly as sent (and signed). */
  body: string;
}

/** Deliveries a listing shows at most, newest first. */
export const DELIVERY_LIST_MAX = 100;

/**
 * Registers an endpoint for the event types given. The answer carries the
 * signing secret; it is never shown again (the service keeps it to sign).
 */
export async function createWebhook(ctx: Context, raw: unknown): Promise<{ webhook: Webhook; secret: string }> {
  const crm = requireCrm(ctx);
  const input = parseInput(webhookInput, raw);
  const url = new URL(input.url);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && !ctx.config.production && LOCAL_HOSTS.has(url.hostname))) {
    throw validationError('url must use https (plain http only for localhost, and not in production)');
  }
  if (url.username || url.password) throw validationError('url must not contain credentials');
  if (ctx.config.production && namesInternalHost(url.hostname)) throw validationError('url must not name a local or private address');
  const secret = `whsec_${randomBytes(32).toString('base64url')}`;
  const webhook = ctx.em.create(Webhook, {
    crm,
    url: url.toString(),
    events: [...new Set(input.events)].sort(),
    description: input.description ?? null,
    secret,
    createdAt: ctx.clock.now(),
  });
  await ctx.em.persistAndFlush(webhook);
  return { webhook, secret };
}

/** The CRM's webhooks, oldest first. */
export async function listWebhooks(ctx: Context): Promise<Webhook[]> {
  const crm = requireCrm(ctx);
  return ctx.em.find(Webhook, { crm }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

/** Removes a webhook; deliveries still pending are dropped with it. */
export async function deleteWebhook(ctx: Context, webhookId: string): Promise<void> {
  const webhook = await getWebhook(ctx, webhookId);
  await ctx.em.removeAndFlush(webhook);
}

const DELIVERY_KEYSET: Keyset = {
  list: 'webhookDeliveries',
  alias: 'd',
  at: { property: 'createdAt', column: 'created_at' },
  tie: { property: 'id', column: 'id', uuid: true },
  order: 'desc',
};

/**
 * The deliveries of one of the CRM's webhooks, newest first, with every
 * attempt: the latest DELIVERY_LIST_MAX, or with `page` one page of all of
 * them (`first` 1..DELIVERY_LIST_MAX).
 */
export async function listDeliveries(ctx: Context, webhookId: string): Promise<WebhookDelivery[]>;
export async function listDeliveries(ctx: Context, webhookId: string, page: PageRequest): Promise<Page<WebhookDelivery>>;
export async function listDeliveries(ctx: Context, webhookId: string, page?: PageRequest): Promise<WebhookDelivery[] | Page<WebhookDelivery>> {
  if (page) pageSize(page.first, DELIVERY_LIST_MAX);
  const webhook = await getWebhook(ctx, webhookId);
  if (!page) return ctx.em.find(WebhookDelivery, { webhook }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: DELIVERY_LIST_MAX });
  return keysetPage(ctx.em.createQueryBuilder(WebhookDelivery, DELIVERY_KEYSET.alias).where({ webhook }), DELIVERY_KEYSET, page, (ids) =>
    ctx.em.find(WebhookDelivery, { id: { $in: ids } }),
  );
}

/** A webhook of the calling CRM; another CRM's, or an id that is no UUID, is 404 as if unknown. */
async function getWebhook(ctx: Context, webhookId: string): Promise<Webhook> {
  const crm = requireCrm(ctx);
  const webhook = isUuid(webhookId) ? await ctx.em.findOne(Webhook, { id: webhookId, crm }) : null;
  if (!webhook) throw notFound('Webhook', webhookId);
  return webhook;
}

export const toWebhookView = (webhook: Webhook): WebhookView => ({
  id: webhook.id,
  url: webhook.url,
  events: webhook.events,
  description: webhook.description,
  createdAt: webhook.createdAt.toISOString(),
});

export const toWebhookDeliveryView = (delivery: WebhookDelivery): WebhookDeliveryView => ({
  id: delivery.id,
  eventId: String(delivery.eventId),
  type: delivery.eventType,
  status: delivery.status,
  attempts: delivery.attemptLog,
  nextAttemptAt: delivery.nextAttemptAt?.toISOString() ?? null,
  createdAt: delivery.createdAt.toISOString(),
  deliveredAt: delivery.deliveredAt?.toISOString() ?? null,
  body: delivery.body,
});
