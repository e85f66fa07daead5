import { type ChildGateway, startChildGateway as startGatewayProcess } from './child-gateway.js';
import { type Client, createClient } from 'graphql-ws';
import type { Redis } from 'ioredis';
import WebSocket from 'ws';
import type { TestApp } from './harness.js';
import type { ApiClient } from './http.js';
import { liveChannel, TOPICS } from '../../services/kernel/jobs.js';


export const CAPACITY_SUBSCRIPTION = `subscription ($refs: [String!]!, $from: String, $to: String, $channelKey: ChannelKey) {
  capacityChanged(refs: $refs, from: $from, to: $to, channelKey: $channelKey, timeFormat: "yyyy-MM-dd'T'HH:mm:ssxxx") {
    scope resourceUuid from to
    bookable { id resourceUuid timeslotUuid appointmentUuid productUuid kind start end formattedStart formattedEnd capacity capacityLeft }
  }
}`;

/**
 * A `capacityChanged` item in the vocabulary of the REST listing, so tests
 * compare what the feed says with what upcoming_bookables answers: scope
 * slot|timeslot, snake_case names, REST kinds, and start/end with the
 * provider's offset as REST shows them (the subscription formats them so,
 * through timeFormat). The GraphQL shape itself is tested in
 * subscriptions-graphql-shape.test.ts.
 */
export function asListingChange(change: any): any {
  const slot = change.bookable;
  if (!slot) return { scope: 'timeslot', resource_uuid: change.resourceUuid, start: change.from, end: change.to };
  return {
    scope: 'slot',
    resource_uuid: slot.resourceUuid,
    timeslot_uuid: slot.timeslotUuid,
    appointment_uuid: slot.appointmentUuid,
    product_uuid: slot.productUuid,
    kind: ({ BOOKABLE: 'models.Bookable', LOT_APPOINTMENT: 'models.LotAppointment' } as Record<string, string>)[slot.kind] ?? slot.kind,
    start: slot.formattedStart,
    end: slot.formattedEnd,
    capacity: slot.capacity,
    capacity_left: slot.capacityLeft,
  };
}

export const APPOINTMENT_SUBSCRIPTION = `subscription ($providerReference: String!) {
  appointmentChanged(providerReference: $providerReference) {
    change providerReference appointmentUuid appointmentReference appointmentState participationUuid participationReference state previousState at
  }
}`;

/** Start of the synthetic slot that `untilLive` publishes; far in the future so it never meets a real one. */
export const PROBE_START = '2099-01-01T00:00:00.000Z';

export const wsUrlOf = (baseUrl: string): string => `${baseUrl.replace(/^http/, 'ws')}/graphql`;

/** One item a subscription received, with the time it arrived and the message (batch) it came in. */
export interface Received<T> {
  item: T;
  at: number;
  batch: number;
}

export interface LiveSubscription<T = any> {
  client: Client;
  received: Received<T>[];
  /** Batches (graphql-ws `next` messages) received so far. */
  batches: number;
  /** Errors the subscription ended with (GraphQL errors of a `next`, or an `error` message). */
  errors: any[];
  completed: boolean;
  /** The first item after the `after`-th received one that matches; rejects after `timeoutMs`. */
  waitFor(predicate: (item: T) => boolean, options?: { after?: number; timeoutMs?: number }): Promise<Received<T>>;
  /** Resolves when the subscription ended (completed or failed). */
  ended(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Subscribes with the graphql-ws client over `ws` and records everything that
 * arrives. `field` names the subscription field whose list of items is kept.
 */
export function subscribe<T = any>(
  baseUrl: string,
  query: string,
  variables: Record<string, unknown>,
  options: { field: string; connectionParams?: Record<string, unknown>; client?: Client },
): LiveSubscription<T> {
  const client =
    options.client ??
    createClient({ url: wsUrlOf(baseUrl), webSocketImpl: WebSocket, retryAttempts: 0, lazy: true, connectionParams: options.connectionParams ?? {} });
  const listeners = new Set<() => void>();
  const notify = () => listeners.forEach((listener) => listener());
  const live: LiveSubscription<T> = {
    client,
    received: [],
    batches: 0,
    errors: [],
    completed: false,
    waitFor(predicate, { after = 0, timeoutMs = 10_000 } = {}) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = live.received.slice(after).find((r) => predicate(r.item));
          if (found) {
            done();
            resolve(found);
          } else if (live.completed) {
            done();
            reject(new Error(`subscription ended without a matching item; errors: ${JSON.stringify(live.errors)}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no matching item within ${timeoutMs} ms; received ${JSON.stringify(live.received.map((r) => r.item))}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    ended(timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('subscription did not end')), timeoutMs);
        const check = () => {
          if (!live.completed) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
        check();
      });
    },
    async close() {
      unsubscribe();
      if (!options.client) await client.dispose();
    },
  };
  const unsubscribe = client.subscribe(
    { query, variables },
    {
      next: (value: { data?: Record<string, T[] | null> | null; errors?: readonly unknown[] }) => {
        if (value.errors?.length) live.errors.push(...value.errors);
        const items = value.data?.[options.field];
        if (items) {
          const batch = live.batches++;
          const toItem = options.field === 'capacityChanged' ? asListingChange : (item: T) => item;
          for (const item of items) live.received.push({ item: toItem(item), at: Date.now(), batch });
        }
        notify();
      },
      error: (error: unknown) => {
        live.errors.push(...(Array.isArray(error) ? error : [error]));
        live.completed = true;
        notify();
      },
      complete: () => {
        live.completed = true;
        notify();
      },
    },
  );
  return live;
}

/**
 * Publishes a synthetic capacity event for `resourceId` on Redis (as the
 * relay would) until the subscription shows it: from then on the gateway is
 * subscribed to Redis and no real event can be missed.
 */
export async function untilLive(sub: LiveSubscription<any>, app: LiveApp, resourceId: string, start = PROBE_START): Promise<void> {
  const end = new Date(Date.parse(start) + 30 * 60_000).toISOString();
  const probe = JSON.stringify({
    scope: 'slot',
    version: 0,
    resourceId,
    timeslotId: null,
    appointmentId: `probe-${resourceId}`,
    productId: null,
    kind: 'models.LotAppointment',
    start,
    end,
    capacity: 1,
    capacityLeft: 1,
  });
  await untilReceived(sub, () => app.redis.publish(liveChannel(app.config.queuePrefix, TOPICS.capacityChanged), probe), (item) => item.appointment_uuid === `probe-${resourceId}`);
}

/** Like `untilLive` for an `appointmentChanged` subscription of a CRM's provider. */
export async function untilAppointmentsLive(sub: LiveSubscription<any>, app: LiveApp, crmId: string, providerId: string): Promise<void> {
  const probe = JSON.stringify({
    change: 'PARTICIPATION_ADDED',
    crmId,
    providerId,
    appointmentUuid: 'probe',
    appointmentReference: 'probe',
    appointmentState: 'ACTIVE',
    participationUuid: null,
    participationReference: null,
    state: null,
    previousState: null,
    at: new Date().toISOString(),
  });
  await untilReceived(sub, () => app.redis.publish(liveChannel(app.config.queuePrefix, TOPICS.appointmentChanged), probe), (item) => item.appointmentUuid === 'probe');
}

/** What the probes need of a test app: its Redis and the prefix of its pub/sub channels. */
export interface LiveApp {
  redis: Pick<Redis, 'publish'>;
  config: { queuePrefix: string };
}

async function untilReceived(sub: LiveSubscription<any>, publish: () => Promise<unknown>, isProbe: (item: any) => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (sub.completed) throw new Error(`subscription ended: ${JSON.stringify(sub.errors)}`);
    await publish();
    try {
      await sub.waitFor(isProbe, { timeoutMs: 300 });
      return;
    } catch {
      // Not subscribed yet; publish again.
    }
  }
  throw new Error('the subscription never became live');
}

export type { ChildGateway } from './child-gateway.js';

/**
 * Runs a second gateway as a child process on the harness app's database,
 * queue prefix and link secret (see child-gateway.ts).
 */
export function startChildGateway(app: TestApp, env: Record<string, string> = {}): Promise<ChildGateway> {
  return startGatewayProcess({
    DATABASE_URL: app.config.databaseUrl,
    QUEUE_PREFIX: app.config.queuePrefix,
    LINK_SIGNING_SECRET: app.config.linkSigningSecret,
    ...env,
  });
}

/**
 * What upcoming_bookables lists for the slot of `resourceRef` starting at `start`
 * (any ISO spelling): the bookable, or undefined when the slot is not listed.
 */
export async function listedAt(client: ApiClient, resourceRef: string, start: string, query = ''): Promise<any | undefined> {
  const res = await client.get(`/resources/${encodeURIComponent(resourceRef)}/upcoming_bookables${query ? `?${query}` : ''}`);
  if (res.status === 204) return undefined;
  if (res.status !== 200) throw new Error(`upcoming_bookables failed: ${res.status} ${res.text}`);
  return Object.entries(res.body as Record<string, unknown>)
    .filter(([key]) => key !== 'public_visible')
    .flatMap(([, value]) => value as any[])
    .find((b) => Date.parse(b.start) === Date.parse(start));
}

/** The capacity_left a live calendar should show for a slot: the listed one, or 0 when upcoming_bookables does not list it. */
export const leftShown = (bookable: { capacity_left: number } | undefined): number => bookable?.capacity_left ?? 0;
