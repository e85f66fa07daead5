import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmIntegration } from '../../services/crm/crm-integration.entity.js';
import { type ContextRoot, createContext } from '../../services/kernel/context.js';
import { newId } from '../../services/kernel/ids.js';
import { attemptWebhookDelivery, pruneWebhookDeliveries } from '../../services/webhooks/webhook-delivery.service.js';
import { fanOutWebhookDeliveries } from '../../services/webhooks/webhook-events.js';
import { createWebhook, deleteWebhook } from '../../services/webhooks/webhook.service.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { sql } from '../support/scheduling-fixtures.js';
import { createLogger } from '../../services/kernel/logger.js';

/** The delivery rules against the real database: fan-out once per event, one attempt at a time, final states. */
describe('webhook deliveries (services/webhooks)', () => {
  let app: TestApp;
  let server: Server;
  let port = 0;
  let hits = 0;
  let answer = 200;
  let eventIds = 1_000_000_000;
  beforeAll(async () => {
    app = await startTestApp();
    // Answers after 300 ms, so two attempts started together overlap.
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        hits++;
        setTimeout(() => res.writeHead(answer).end(), 300);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    server?.close();
    await app?.close();
  });

  const root = (): ContextRoot => ({ em: app.orm.em, clock: app.clock, config: app.config, logger: createLogger('silent') });

  async function setup() {
    const { crmId } = await app.newCrm();
    const crm = await app.orm.em.fork().findOneOrFail(CrmIntegration, { id: crmId });
    const ctx = createContext(root(), { crm });
    const { webhook } = await createWebhook(ctx, { url: `http://127.0.0.1:${port}/hook`, events: ['appointment.cancelled'] });
    const row = {
      id: String(eventIds++),
      topic: 'appointment-changed',
      payload: {
        change: 'APPOINTMENT_CANCELLED',
        crmId,
        providerId: newId(),
        appointmentUuid: newId(),
        appointmentReference: 'a@test',
        appointmentState: 'CANCELLED',
        participationUuid: null,
        participationReference: null,
        state: null,
        previousState: null,
        at: '2027-01-01T00:00:00Z',
      },
    };
    return { crmId, ctx, webhook, row };
  }

  const deliveriesOf = (webhookId: string) =>
    sql<{ id: string; status: string; attempts: number }>(app, `select id, status, attempts from webhook_delivery where webhook_id = ?`, [webhookId]);

  it('fans an event out once, however often the relay hands it over; other event types and other CRMs get nothing', async () => {
    const { row, webhook } = await setup();
    const other = await setup();
    expect(await fanOutWebhookDeliveries(app.orm.em.fork(), [row])).toBe(1);
    expect(await fanOutWebhookDeliveries(app.orm.em.fork(), [row])).toBe(0);
    expect(await deliveriesOf(webhook.id)).toHaveLength(1);
    expect(await deliveriesOf(other.webhook.id)).toHaveLength(0);
    const [job] = await sql<{ n: string }>(app, `select count(*) as n from outbox_message where topic = 'webhook' and payload->>'deliveryId' = ?`, [(await deliveriesOf(webhook.id))[0]!.id]);
    expect(Number(job!.n)).toBe(1);
    expect(await fanOutWebhookDeliveries(app.orm.em.fork(), [{ ...other.row, id: String(eventIds++), payload: { ...other.row.payload, change: 'HOLD_EXPIRED' } }])).toBe(0);
  });

  it('runs one attempt at a time: of two started together, one sends and the other finds it busy', async () => {
    const { row, webhook } = await setup();
    await fanOutWebhookDeliveries(app.orm.em.fork(), [row]);
    const [delivery] = await deliveriesOf(webhook.id);
    hits = 0;
    answer = 200;
    const outcomes = await Promise.all([attemptWebhookDelivery(root(), delivery!.id, 1000), attemptWebhookDelivery(root(), delivery!.id, 1000)]);
    expect(outcomes.sort()).toEqual(['busy', 'delivered']);
    expect(hits).toBe(1);
    expect(await deliveriesOf(webhook.id)).toEqual([{ id: delivery!.id, status: 'SUCCEEDED', attempts: 1 }]);
    expect(await attemptWebhookDelivery(root(), delivery!.id, 1000)).toBe('gone');
    expect(hits).toBe(1);
  });

  it('a failed attempt is RETRYING with its next time, the last one FAILED; a removed webhook sends nothing more', async () => {
    const { row, webhook, ctx } = await setup();
    await fanOutWebhookDeliveries(app.orm.em.fork(), [row]);
    const [delivery] = await deliveriesOf(webhook.id);
    answer = 503;
    expect(await attemptWebhookDelivery(root(), delivery!.id, 60_000)).toBe('failed');
    const [retrying] = await sql<{ status: string; due_in: number }>(
      app,
      `select status, extract(epoch from next_attempt_at - now())::int as due_in from webhook_delivery where id = ?`,
      [delivery!.id],
    );
    expect(retrying!.status).toBe('RETRYING');
    expect(retrying!.due_in).toBeGreaterThan(50);
    expect(await attemptWebhookDelivery(root(), delivery!.id, null)).toBe('failed');
    expect(await deliveriesOf(webhook.id)).toEqual([{ id: delivery!.id, status: 'FAILED', attempts: 2 }]);
    expect(await attemptWebhookDelivery(root(), delivery!.id, null)).toBe('gone');

    const next = { ...row, id: String(eventIds++) };
    await fanOutWebhookDeliveries(app.orm.em.fork(), [next]);
    const pending = (await deliveriesOf(webhook.id)).find((d) => d.status === 'PENDING')!;
    await deleteWebhook(ctx, webhook.id);
    hits = 0;
    expect(await attemptWebhookDelivery(root(), pending.id, 1000)).toBe('gone');
    expect(hits).toBe(0);
    answer = 200;
  });

  it('in production refuses plain http, and local or private addresses by name; elsewhere http to localhost is fine', async () => {
    const { crmId } = await app.newCrm();
    const crm = await app.orm.em.fork().findOneOrFail(CrmIntegration, { id: crmId });
    const production = createContext({ ...root(), config: { ...app.config, production: true } }, { crm });
    for (const url of ['http://localhost:3000/x', 'https://localhost/x', 'https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://192.168.0.10/x', 'https://[::1]/x', 'https://169.254.169.254/latest', 'https://api.localhost/x', 'https://localhost./x', 'https://foo.localhost../x']) {
      await expect(createWebhook(production, { url, events: ['hold.expired'] }), url).rejects.toThrow(/url must/);
    }
    const { webhook } = await createWebhook(production, { url: 'https://203.0.113.7/hooks', events: ['hold.expired', 'hold.expired'] });
    expect(webhook.events).toEqual(['hold.expired']);
    const development = createContext(root(), { crm });
    expect((await createWebhook(development, { url: 'http://localhost:3000/x', events: ['hold.expired'] })).webhook.url).toBe('http://localhost:3000/x');
    const [count] = await sql<{ n: string }>(app, `select count(*) as n from webhook where crm_id = ?`, [crmId]);
    expect(Number(count!.n)).toBe(2);
  });

  it('prunes finished deliveries after the retention time, keeps the ones still under way and the recent ones', async () => {
    const { row, webhook } = await setup();
    const rows = [0, 1, 2, 3].map(() => ({ ...row, id: String(eventIds++) }));
    await fanOutWebhookDeliveries(app.orm.em.fork(), rows);
    const ids = (await deliveriesOf(webhook.id)).map((d) => d.id).sort();
    const [oldSucceeded, oldFailed, oldPending, recentSucceeded] = ids;
    const set = (id: string, status: string, createdAt: string) =>
      sql(app, `update webhook_delivery set status = ?, created_at = ? where id = ?`, [status, createdAt, id]);
    await set(oldSucceeded!, 'SUCCEEDED', '2026-01-01T00:00:00Z');
    await set(oldFailed!, 'FAILED', '2026-01-01T00:00:00Z');
    await set(oldPending!, 'RETRYING', '2026-01-01T00:00:00Z');
    await set(recentSucceeded!, 'SUCCEEDED', '2026-06-30T00:00:00Z');
    expect(await pruneWebhookDeliveries(root(), new Date('2026-06-01T00:00:00Z'))).toBeGreaterThanOrEqual(2);
    expect((await deliveriesOf(webhook.id)).map((d) => d.id).sort()).toEqual([oldPending, recentSucceeded].sort());
  });
});
