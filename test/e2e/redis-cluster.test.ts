import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.js';
import { apiClient, unique } from '../support/http.js';
import { isolatedDatabase } from '../support/isolated-database.js';
import { CAPACITY_SUBSCRIPTION, subscribe, untilLive } from '../support/live.js';
import { bookSlot, setupMailProvider } from '../support/mail-fixtures.js';
import { enc } from '../support/offerings-fixtures.js';
import { startRedisCluster, type RedisClusterProcess } from '../support/redis-cluster.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';

describe('on a Redis Cluster (REDIS_CLUSTER_NODES, QUEUE_PREFIX with a hash tag)', () => {
  let cluster: RedisClusterProcess;
  let sink: SmtpSink;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  let app: TestApp;
  const prefix = `{${unique('cl')}}`;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    sink = await startSmtpSink();
    db = await isolatedDatabase('cluster_redis');
    app = await startTestApp({
      config: { redisClusterNodes: cluster.nodes, redisUrl: 'redis://127.0.0.1:1', queuePrefix: prefix, smtpUrl: sink.url, databaseUrl: db.url },
      worker: { relayPollMs: 200 },
    });
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await db?.drop();
    await sink?.close();
    await cluster?.stop();
  });

  it('books through BullMQ, pub/sub and the listing counters on the cluster, all keys in the hash tag slot', async () => {
    expect(app.redis).toBeInstanceOf(Cluster);
    expect((await app.anonymous.get('/readyz')).status).toBe(200);
    const f = await setupMailProvider(app, { slots: 2, capacity: 2 });
    const sub = subscribe(app.baseUrl, CAPACITY_SUBSCRIPTION, { refs: [f.resourceUuid] }, { field: 'capacityChanged' });
    try {
      await untilLive(sub, app, f.resourceUuid);
      const listing = (headers: Record<string, string> = {}) => apiClient(app.baseUrl).get(`/resources/${enc(f.resourceUuid)}/upcoming_bookables`, headers);
      expect((await listing()).headers.get('x-cache')).toBe('MISS');
      expect((await listing()).headers.get('x-cache')).toBe('HIT');

      const { email } = await bookSlot(app, f, 0);
      // Mails went through the BullMQ mail queue on the cluster.
      await sink.waitForMail(email, 1, 30_000);
      // The capacity event went through the relay's PUBLISH and the gateway's SUBSCRIBE on the cluster.
      await sub.waitFor((item) => item.start && new Date(item.start).toISOString() === f.slots[0]!.from && item.capacity_left === 1, { timeoutMs: 20_000 });
      // The booking moved the resource's counter (MGET within the hash tag's slot): the listing is computed afresh.
      const after = await listing();
      expect(after.headers.get('x-cache')).toBe('MISS');

      // Every key of the deployment lives in the hash tag's slot.
      const cluster = app.redis as Cluster;
      const keys = (await Promise.all(cluster.nodes('master').map((node) => node.keys(`${prefix}*`)))).flat();
      expect(keys.length).toBeGreaterThan(3);
      const slots = new Set(await Promise.all(keys.map((key) => cluster.cluster('KEYSLOT', key))));
      expect(slots.size).toBe(1);
    } finally {
      await sub.close();
    }
  });
});
