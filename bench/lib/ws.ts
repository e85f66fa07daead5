import { performance } from 'node:perf_hooks';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { errorMessage } from './log.js';
import { pool, tally } from './stats.js';

/** One slot of a `capacityChanged` message (the `bookable` of a SLOT change). */
export interface LiveItem {
  id: string;
  resourceUuid: string;
  start: string;
  end: string;
  capacity: number;
  capacityLeft: number;
  kind: string;
}

/** The fields a live calendar selects, as in examples/operations/live-calendar.graphql. */
const CAPACITY_CHANGED = `subscription ($refs: [String!]!) {
  capacityChanged(refs: $refs) { scope bookable { id resourceUuid start end capacity capacityLeft kind } }
}`;

export interface Subscribers {
  /** Sockets that were acknowledged by the server (connection_ack) and sent their subscription. */
  connected: number;
  /** Sockets that could not connect, by reason. */
  failures: Record<string, number>;
  /** Sockets closed after they had connected, and subscriptions that ended with an error. */
  dropped: () => number;
  subscriptionErrors: () => Record<string, number>;
  close(): Promise<void>;
}

/**
 * Opens `count` graphql-ws sockets, one client each, every one subscribed to
 * `capacityChanged(refs)`; `concurrency` handshakes at a time, none started
 * after `deadline`. Every message is passed to `onItems` with the socket's
 * index and the instant it arrived (performance.now() and Date.now()).
 */
export async function openSubscribers(options: {
  url: string;
  count: number;
  refs: string[];
  concurrency: number;
  deadline: number;
  onItems: (socket: number, items: LiveItem[], at: number, wallAt: number) => void;
}): Promise<Subscribers> {
  const clients: Client[] = [];
  const failures: string[] = [];
  const subscriptionErrors: string[] = [];
  let connected = 0;
  let dropped = 0;
  await pool(
    Array.from({ length: options.count }, (_, i) => i),
    options.concurrency,
    async (index) => {
      let isConnected = false;
      const ready = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no connection_ack within 15 s')), 15_000);
        const client = createClient({
          url: options.url,
          webSocketImpl: WebSocket,
          lazy: false,
          retryAttempts: 0,
          connectionAckWaitTimeout: 15_000,
          on: {
            connected: () => {
              clearTimeout(timer);
              isConnected = true;
              resolve();
            },
            closed: (event) => {
              clearTimeout(timer);
              if (isConnected) dropped++;
              else reject(new Error(`closed before ack: ${(event as { code?: number })?.code ?? '?'} ${(event as { reason?: string })?.reason ?? ''}`.trim()));
            },
            error: (error) => {
              clearTimeout(timer);
              if (!isConnected) reject(new Error(errorMessage(error) || 'socket error'));
            },
          },
        });
        clients.push(client);
        client.subscribe<{ capacityChanged: { scope: string; bookable: LiveItem | null }[] }>(
          { query: CAPACITY_CHANGED, variables: { refs: options.refs } },
          {
            next: (message) => {
              const at = performance.now();
              const wallAt = Date.now();
              if (message.errors?.length) subscriptionErrors.push(message.errors[0]!.message);
              const changes = message.data?.capacityChanged;
              if (changes) options.onItems(index, changes.flatMap((change) => (change.bookable ? [change.bookable] : [])), at, wallAt);
            },
            error: (error) => {
              if (isConnected) subscriptionErrors.push(Array.isArray(error) ? String(error[0]?.message) : errorMessage(error) || 'closed');
            },
            complete: () => {},
          },
        );
      });
      try {
        await ready;
        connected++;
      } catch (error) {
        failures.push(errorMessage(error));
      }
    },
    () => Date.now() >= options.deadline,
  );
  return {
    connected,
    failures: tally(failures),
    dropped: () => dropped,
    subscriptionErrors: () => tally(subscriptionErrors),
    close: async () => {
      await Promise.allSettled(clients.map((client) => client.dispose()));
    },
  };
}
