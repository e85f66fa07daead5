import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { APPOINTMENT_CHANGES } from '../../services/live/appointment-events.js';
import { signWebhookBody } from '../../services/webhooks/webhook-delivery.service.js';
import { WEBHOOK_EVENT_OF_CHANGE, WEBHOOK_EVENT_TYPES } from '../../services/webhooks/webhook-events.js';
import { WEBHOOK_RETRY } from '../../worker/queues.js';

describe('webhook rules', () => {
  it('signs "t.body" with HMAC-SHA256 as t=<unix>,v1=<hex>', () => {
    const body = '{"id":"d1","type":"participation.added"}';
    const expected = createHmac('sha256', 'whsec_test').update(`1700000000.${body}`).digest('hex');
    expect(signWebhookBody('whsec_test', 1_700_000_000, body)).toBe(`t=1700000000,v1=${expected}`);
    expect(signWebhookBody('whsec_other', 1_700_000_000, body)).not.toBe(`t=1700000000,v1=${expected}`);
  });

  it('retries with exponential back-off for at least 24 hours', () => {
    // BullMQ's exponential back-off waits delay × 2^(n-1) before retry n.
    const waits = Array.from({ length: WEBHOOK_RETRY.attempts - 1 }, (_, i) => WEBHOOK_RETRY.delayMs * 2 ** i);
    const total = waits.reduce((sum, wait) => sum + wait, 0);
    expect(total).toBeGreaterThanOrEqual(24 * 3600_000);
    expect(waits[0]).toBeLessThanOrEqual(60_000);
  });

  it('speaks the vocabulary of the appointmentChanged subscription, one type per change', () => {
    expect(Object.keys(WEBHOOK_EVENT_OF_CHANGE).sort()).toEqual([...APPOINTMENT_CHANGES].sort());
    expect(new Set(WEBHOOK_EVENT_TYPES).size).toBe(APPOINTMENT_CHANGES.length);
    for (const change of APPOINTMENT_CHANGES) expect(WEBHOOK_EVENT_OF_CHANGE[change]).toBe(change.toLowerCase().replace('_', '.'));
  });
});
