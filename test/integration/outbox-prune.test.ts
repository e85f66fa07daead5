import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailDelivery } from '../../services/mail/mail-delivery.entity.js';
import { OutboxMessage } from '../../services/outbox/outbox-message.entity.js';
import { pruneDispatchedOutbox } from '../../services/outbox/outbox.service.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { isolatedDatabase } from '../support/isolated-database.js';
import { unique } from '../support/http.js';

describe('outbox pruning', () => {
  let app: TestApp;
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  beforeAll(async () => {
    database = await isolatedDatabase(unique('prune'));
    app = await startTestApp({ config: { databaseUrl: database.url } });
  });
  afterAll(async () => {
    await app?.close();
    await database?.drop();
  });

  it('deletes old dispatched rows, keeps pending, recent and still-travelling mail rows', async () => {
    const em = app.context().em;
    const old = new Date('2026-01-01T00:00:00Z');
    const row = (dispatchedAt: Date | null, kind: 'mail' | 'event' = 'event') =>
      em.create(OutboxMessage, { kind, topic: kind === 'mail' ? 'mail' : 'capacity-changed', payload: {}, dispatchedAt });
    const oldEvent = row(old);
    const pending = row(null);
    const recent = row(new Date('2026-06-30T00:00:00Z'));
    const sentMail = row(old, 'mail');
    const retryingMail = row(old, 'mail');
    await em.flush();
    em.create(MailDelivery, { id: sentMail.id, template: 'user-verification', recipient: 'a@example.com', status: 'SENT' });
    em.create(MailDelivery, { id: retryingMail.id, template: 'user-verification', recipient: 'b@example.com', status: 'RETRYING' });
    await em.flush();

    expect(await pruneDispatchedOutbox(app.context().em, new Date('2026-06-01T00:00:00Z'))).toBe(2);
    const left = (await app.context().em.find(OutboxMessage, {})).map((r) => r.id).sort();
    expect(left).toEqual([pending.id, recent.id, retryingMail.id].sort());
    expect(left).not.toContain(oldEvent.id);
  });
});
