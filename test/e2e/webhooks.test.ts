import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookEventBody } from '../../schema/rest/openapi/response-schemas.js';
import { setupBookable } from '../support/booking-fixtures.js';
import { book, reserve } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { apiClient } from '../support/http.js';
import { createAppointment, setupScheduling, sql } from '../support/scheduling-fixtures.js';
import { eventually, type ReceivedDelivery, WebhookReceiver } from '../support/webhook-receiver.js';

const ALL_EVENTS = ['participation.added', 'participation.state_changed', 'hold.expired', 'appointment.cancelled', 'appointment.deleted'];

/** What a receiver does: recompute the HMAC of "t.body" with the secret and compare in constant time. */
function verifySignature(delivery: ReceivedDelivery, secret: string): boolean {
  const header = String(delivery.headers['x-booking-signature'] ?? '');
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=') as [string, string]));
  if (!parts.t || !parts.v1) return false;
  const expected = createHmac('sha256', secret).update(`${parts.t}.${delivery.body}`).digest();
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe('webhooks for CRMs', () => {
  let app: TestApp;
  const receivers: WebhookReceiver[] = [];
  const receiver = async () => {
    const started = await new WebhookReceiver().start();
    receivers.push(started);
    return started;
  };

  beforeAll(async () => {
    app = await startTestApp({ worker: { relayPollMs: 200, webhookRetry: { attempts: 6, delayMs: 300 } } });
  });
  afterAll(async () => {
    await app?.close();
    for (const r of receivers) await r.stop();
  });

  async function register(api: ReturnType<typeof apiClient>, crmId: string, url: string, events = ALL_EVENTS) {
    const res = await api.post(`/crms/${crmId}/webhooks`, { url, events });
    expect(res.status, res.text).toBe(201);
    return res.body.webhook as { id: string; secret: string };
  }

  const deliveries = async (api: ReturnType<typeof apiClient>, crmId: string, webhookId: string): Promise<any[]> => {
    const res = await api.get(`/crms/${crmId}/webhooks/${webhookId}/deliveries`);
    expect(res.status).toBe(200);
    return res.body;
  };

  it('registers, lists (without the secret) and removes webhooks; bad input is a 400 that creates nothing', async () => {
    const { crmId, api } = await app.newCrm();
    const created = await api.post(`/crms/${crmId}/webhooks`, { url: 'https://crm.example.com/hook', events: ['participation.added'], description: 'sync' });
    expect(created.status).toBe(201);
    expect(created.body.webhook).toMatchObject({ url: 'https://crm.example.com/hook', events: ['participation.added'], description: 'sync' });
    expect(created.body.webhook.secret).toMatch(/^whsec_[A-Za-z0-9_-]{40,}$/);
    const listed = await api.get(`/crms/${crmId}/webhooks`);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([{ id: created.body.webhook.id, url: 'https://crm.example.com/hook', events: ['participation.added'], description: 'sync', createdAt: expect.any(String) }]);
    expect(listed.text).not.toContain(created.body.webhook.secret);

    const bad: [unknown, RegExp][] = [
      [{ url: 'http://crm.example.com/hook', events: ['participation.added'] }, /url must use https/],
      [{ url: 'ftp://localhost/hook', events: ['participation.added'] }, /url must use https/],
      [{ url: 'not a url', events: ['participation.added'] }, /url must be a valid url/],
      [{ url: 'https://crm.example.com/hook', events: [] }, /events must contain at least 1/],
      [{ url: 'https://crm.example.com/hook', events: ['booking.exploded'] }, /events\[0\] must be one of participation\.added/],
      [{ url: 'https://crm.example.com/hook' }, /events is required/],
      [{ url: 'https://user:pw@crm.example.com/hook', events: ['participation.added'] }, /credentials/],
    ];
    for (const [body, message] of bad) {
      const res = await api.post(`/crms/${crmId}/webhooks`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors[0].message).toMatch(message);
    }
    expect((await api.get(`/crms/${crmId}/webhooks`)).body).toHaveLength(1);
    // Plain http is fine for a receiver on this machine outside production.
    expect((await api.post(`/crms/${crmId}/webhooks`, { url: 'http://localhost:9/x', events: ['hold.expired'] })).status).toBe(201);

    expect((await api.delete(`/crms/${crmId}/webhooks/${created.body.webhook.id}`)).status).toBe(204);
    expect((await api.delete(`/crms/${crmId}/webhooks/${created.body.webhook.id}`)).status).toBe(404);
    expect((await api.delete(`/crms/${crmId}/webhooks/not-a-uuid`)).status).toBe(404);
    expect((await api.get(`/crms/${crmId}/webhooks`)).body.map((w: any) => w.url)).toEqual(['http://localhost:9/x']);
  });

  it('answers 401 without or with an unknown key, 403 for another CRM, 404 for another CRM’s webhook', async () => {
    const a = await app.newCrm();
    const b = await app.newCrm();
    const hook = await register(a.api, a.crmId, 'https://a.example.com/hook');
    for (const [method, path] of [
      ['POST', `/crms/${a.crmId}/webhooks`],
      ['GET', `/crms/${a.crmId}/webhooks`],
      ['DELETE', `/crms/${a.crmId}/webhooks/${hook.id}`],
      ['GET', `/crms/${a.crmId}/webhooks/${hook.id}/deliveries`],
    ] as const) {
      expect((await app.anonymous.request(method, path, method === 'POST' ? {} : undefined)).status).toBe(401);
      expect((await apiClient(app.baseUrl, 'bk_unknown').request(method, path, method === 'POST' ? {} : undefined)).status).toBe(401);
      expect((await b.api.request(method, path, method === 'POST' ? {} : undefined)).status).toBe(403);
    }
    expect((await b.api.get(`/crms/${b.crmId}/webhooks/${hook.id}/deliveries`)).status).toBe(404);
    expect((await b.api.delete(`/crms/${b.crmId}/webhooks/${hook.id}`)).status).toBe(404);
    expect((await a.api.get(`/crms/${a.crmId}/webhooks`)).body).toHaveLength(1);
  });

  it('delivers signed events of the booking flow to the CRM’s endpoint only, with an id to de-duplicate by', async () => {
    const f = await setupBookable(app);
    const other = await setupBookable(app);
    const mine = await receiver();
    const theirs = await receiver();
    const hook = await register(f.api, f.crmId, mine.url);
    await register(other.api, other.crmId, theirs.url);

    const held = await reserve(app.anonymous, f);
    expect(held.status).toBe(200);
    expect((await book(app.anonymous, f, { placeholder_id: held.body.participation.customer_uuid })).status).toBe(201);

    await eventually(async () => mine.received.length >= 2, 15_000, 'two deliveries');
    const types = mine.received.map((d) => d.json.type);
    expect(types).toEqual(['participation.added', 'participation.state_changed']);
    for (const delivery of mine.received) {
      expect(verifySignature(delivery, hook.secret)).toBe(true);
      expect(verifySignature(delivery, 'whsec_wrong')).toBe(false);
      expect(delivery.headers['x-booking-delivery']).toBe(delivery.json.id);
      expect(delivery.headers['x-booking-event']).toBe(delivery.json.type);
      expect(delivery.headers['content-type']).toBe('application/json');
      expect(delivery.json.crmId).toBe(f.crmId);
      // The body is what the OpenAPI document's `webhooks` section describes.
      expect(webhookEventBody.safeParse(delivery.json).error?.issues ?? []).toEqual([]);
      expect(delivery.json.data.providerReference).toBe(f.providerRef);
      expect(delivery.json.data.appointmentUuid).toBe(held.body.participation.appointment_uuid);
    }
    expect(mine.received[1]!.json.data).toMatchObject({ change: 'PARTICIPATION_STATE_CHANGED', state: 'BOOKED', previousState: 'RESERVED' });
    // Signature timestamps come from the service clock.
    const t = Number(String(mine.received[0]!.headers['x-booking-signature']).match(/t=(\d+)/)![1]);
    expect(Math.abs(t - app.clock.now().getTime() / 1000)).toBeLessThan(120);

    const listed = await eventually(async () => {
      const rows = await deliveries(f.api, f.crmId, hook.id);
      return rows.length === 2 && rows.every((row) => row.status === 'SUCCEEDED') && rows;
    });
    expect(listed[0]).toMatchObject({ status: 'SUCCEEDED', attempts: [{ statusCode: 200, error: null }], deliveredAt: expect.any(String) });
    expect(listed.map((row: any) => row.id).sort()).toEqual(mine.received.map((d) => d.json.id).sort());
    expect(listed.find((row: any) => row.id === mine.received[0]!.json.id).body).toBe(mine.received[0]!.body);

    // The other CRM heard nothing of this booking, and nobody got another CRM's event.
    expect(theirs.received).toEqual([]);
  });

  it('retries while the endpoint is down or failing and delivers once it is back, with the same id', async () => {
    const f = await setupScheduling(app);
    const endpoint = await receiver();
    const hook = await register(f.api, f.crmId, endpoint.url, ['appointment.cancelled']);
    const appointment = await createAppointment(f);
    await endpoint.stop();

    const cancelled = await f.api.delete(`${f.base}/appointments`, { appointmentReference: appointment.reference });
    expect(cancelled.status).toBe(200);
    const failing = await eventually(async () => {
      const [row] = await deliveries(f.api, f.crmId, hook.id);
      return row?.attempts.length >= 1 && row;
    });
    expect(failing.status).toBe('RETRYING');
    expect(failing.attempts[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/ECONNREFUSED/) });
    expect(failing.nextAttemptAt).toEqual(expect.any(String));

    // Back, but answering 500: still a failure, recorded with its status.
    endpoint.status = 500;
    await endpoint.start();
    await eventually(async () => endpoint.received.length >= 1, 15_000, 'an attempt at the restarted endpoint');
    endpoint.status = 204;
    const done = await eventually(async () => {
      const [row] = await deliveries(f.api, f.crmId, hook.id);
      return row?.status === 'SUCCEEDED' && row;
    });
    expect(done.attempts.length).toBeGreaterThanOrEqual(3);
    expect(done.attempts.at(-1)).toMatchObject({ statusCode: 204, error: null });
    expect(done.attempts.some((a: any) => a.statusCode === 500 && a.error === 'answered 500')).toBe(true);
    expect(new Set(endpoint.received.map((d) => d.json.id))).toEqual(new Set([done.id]));
    expect(endpoint.received.every((d) => verifySignature(d, hook.secret))).toBe(true);
    const count = endpoint.received.length;
    // Nothing more comes once delivered.
    await app.worker!.relay.kick();
    expect(endpoint.received.length).toBe(count);
  });

  it('sends only the event types chosen, and nothing for a change that was rolled back', async () => {
    const f = await setupScheduling(app);
    const endpoint = await receiver();
    const cancellations = await register(f.api, f.crmId, endpoint.url, ['appointment.cancelled']);
    const everything = await register(f.api, f.crmId, endpoint.url, ALL_EVENTS);

    // All or nothing: the second participant does not fit, so the first one's event is rolled back too.
    const refused = await f.api.post(`${f.base}/appointments`, {
      reference: 'rolled-back@test',
      start: '2027-03-02T10:00',
      end: '2027-03-02T11:00',
      resourceReference: f.resourceRef,
      productReference: f.productRef,
      capacity: 1,
      participations: [
        { reference: 'p1@test', name: 'One', email: 'one@example.com', state: 'BOOKED' },
        { reference: 'p2@test', name: 'Two', email: 'two@example.com', state: 'BOOKED' },
      ],
    });
    expect(refused.status).toBe(409);

    const appointment = await createAppointment(f, {
      participations: [{ reference: 'p3@test', name: 'Three', email: 'three@example.com', state: 'BOOKED' }],
    });
    expect((await f.api.delete(`${f.base}/appointments`, { appointmentReference: appointment.reference })).status).toBe(200);

    const all = await eventually(async () => {
      const rows = await deliveries(f.api, f.crmId, everything.id);
      return rows.length >= 2 && rows.every((row) => row.status === 'SUCCEEDED') && rows;
    });
    const bodies = all.map((row: any) => JSON.parse(row.body));
    expect(bodies.map((b: any) => b.data.appointmentReference)).not.toContain('rolled-back@test');
    expect(bodies.map((b: any) => b.type).sort()).toEqual(['appointment.cancelled', 'participation.added']);
    expect(bodies.find((b: any) => b.type === 'participation.added').data).toMatchObject({ participationReference: 'p3@test', state: 'BOOKED' });
    const onlyCancelled = await eventually(async () => {
      const rows = await deliveries(f.api, f.crmId, cancellations.id);
      return rows.length === 1 && rows[0].status === 'SUCCEEDED' && rows;
    });
    expect(JSON.parse(onlyCancelled[0].body)).toMatchObject({ type: 'appointment.cancelled', data: { change: 'APPOINTMENT_CANCELLED', appointmentReference: appointment.reference } });
    expect(await sql(app, `select id from webhook_delivery where body like ?`, ['%rolled-back@test%'])).toEqual([]);
    // One event, two webhooks: two deliveries with their own ids and the same eventId.
    const cancelledEvent = bodies.find((b: any) => b.type === 'appointment.cancelled');
    expect(JSON.parse(onlyCancelled[0].body).eventId).toBe(cancelledEvent.eventId);
    expect(onlyCancelled[0].id).not.toBe(cancelledEvent.id);
  });

  it('GraphQL lists the webhooks and their deliveries with attempts; another CRM’s webhook is NOT_FOUND', async () => {
    const f = await setupScheduling(app);
    const endpoint = await receiver();
    const hook = await register(f.api, f.crmId, endpoint.url, ['appointment.cancelled']);
    const appointment = await createAppointment(f);
    expect((await f.api.delete(`${f.base}/appointments`, { appointmentReference: appointment.reference })).status).toBe(200);
    await eventually(async () => (await deliveries(f.api, f.crmId, hook.id))[0]?.status === 'SUCCEEDED');

    const query = `query ($id: String!) { webhooks { id url events } webhookDeliveries(webhookId: $id) { nodes { id type status eventId body attempts { statusCode error durationMs at } } } }`;
    const res = await f.api.graphql(query, { id: hook.id });
    expect(res.body.errors).toBeUndefined();
    // GraphQL spells event types as the subscription's changes (enum WebhookEventType).
    expect(res.body.data.webhooks).toEqual([{ id: hook.id, url: endpoint.url, events: ['APPOINTMENT_CANCELLED'] }]);
    expect(res.body.data.webhookDeliveries.nodes).toMatchObject([{ type: 'APPOINTMENT_CANCELLED', status: 'SUCCEEDED', attempts: [{ statusCode: 200, error: null }] }]);

    const other = await app.newCrm();
    const foreign = await other.api.graphql(query, { id: hook.id });
    expect(foreign.body.errors![0].extensions.code).toBe('NOT_FOUND');
    const anonymous = await app.anonymous.graphql(query, { id: hook.id });
    expect(anonymous.body.errors![0].extensions.code).toBe('UNAUTHENTICATED');
  });
});
