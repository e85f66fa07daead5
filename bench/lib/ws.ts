import { performance } from 'node:perf_hooks';
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
 * Opens `count` sockets speaking the graphql-ws protocol
 * (graphql-transport-ws), every one subscribed to `capacityChanged(refs)`;
 * `concurrency` handshakes at a time, none started after `deadline`. Every
 * message is passed to `onItems` with the socket's index and the instant it
 * arrived (performance.now() and Date.now()), taken before it is parsed.
 *
 * The protocol is spoken here with `ws` directly rather than through the
 * graphql-ws client: at 5,000 sockets every change arrives 5,000 times at
 * once, and the client's own work per message (validation, its sink and
 * promise machinery) delayed the benchmark's event loop by 90–140 ms (p99),
 * which the latencies then included. What the protocol needs of a
 * subscriber is small: connection_init, subscribe after connection_ack,
 * pong to ping, and reading next, error and complete.
 */
export async function openSubscribers(options: {
  url: string;
  count: number;
  refs: string[];
  concurrency: number;
  deadline: number;
  onItems: (socket: number, items: LiveItem[], at: number, wallAt: number) => void;
}): Promise<Subscribers> {
  const sockets: WebSocket[] = [];
  const failures: string[] = [];
  const subscriptionErrors: string[] = [];
  let connected = 0;
  let dropped = 0;
  const subscribe = JSON.stringify({ id: '1', type: 'subscribe', payload: { query: CAPACITY_CHANGED, variables: { refs: options.refs } } });
  await pool(
    Array.from({ length: options.count }, (_, i) => i),
    options.concurrency,
    async (index) => {
      let isConnected = false;
      const ready = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no connection_ack within 15 s')), 15_000);
        const socket = new WebSocket(options.url, GRAPHQL_WS_PROTOCOL, { skipUTF8Validation: true });
        sockets.push(socket);
        socket.on('open', () => socket.send(CONNECTION_INIT));
        socket.on('message', (data: Buffer) => {
          const at = performance.now();
          const wallAt = Date.now();
          const message = JSON.parse(data.toString()) as ServerMessage;
          switch (message.type) {
            case 'next': {
              if (message.payload.errors?.length) subscriptionErrors.push(message.payload.errors[0]!.message);
              const changes = message.payload.data?.capacityChanged;
              if (changes) options.onItems(index, changes.flatMap((change) => (change.bookable ? [change.bookable] : [])), at, wallAt);
              break;
            }
            case 'connection_ack':
              clearTimeout(timer);
              isConnected = true;
              socket.send(subscribe);
              resolve();
              break;
            case 'ping':
              socket.send(PONG);
              break;
            case 'error':
              subscriptionErrors.push(message.payload[0]?.message ?? 'error');
              break;
            case 'complete':
              if (isConnected) subscriptionErrors.push('completed by the server');
              break;
          }
        });
        socket.on('close', (code: number, reason: Buffer) => {
          clearTimeout(timer);
          if (isConnected) dropped++;
          else reject(new Error(`closed before ack: ${code} ${reason.toString()}`.trim()));
        });
        socket.on('error', (error: Error) => {
          clearTimeout(timer);
          if (!isConnected) reject(new Error(errorMessage(error) || 'socket error'));
        });
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
      await Promise.allSettled(
        sockets.map(
          (socket) =>
            new Promise<void>((resolve) => {
              if (socket.readyState === WebSocket.CLOSED) return resolve();
              socket.once('close', () => resolve());
              socket.close(1000);
              setTimeout(() => {
                socket.terminate();
                resolve();
              }, 2_000).unref();
            }),
        ),
      );
    },
  };
}

const GRAPHQL_WS_PROTOCOL = 'graphql-transport-ws';
const CONNECTION_INIT = JSON.stringify({ type: 'connection_init', payload: {} });
const PONG = JSON.stringify({ type: 'pong' });

/** The server messages of the graphql-ws protocol a subscriber reads. */
type ServerMessage =
  | { type: 'connection_ack' | 'ping' | 'pong'; payload?: unknown }
  | { type: 'next'; id: string; payload: { data?: { capacityChanged: { scope: string; bookable: LiveItem | null }[] }; errors?: { message: string }[] } }
  | { type: 'error'; id: string; payload: { message: string }[] }
  | { type: 'complete'; id: string };
