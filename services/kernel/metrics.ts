import client from 'prom-client';

/**
 * The Prometheus metrics of a gateway or worker process, in prom-client's
 * default registry (so `npm start`'s supervisor can aggregate its gateway
 * processes). Counters are per process; gauges that describe shared state
 * (outbox, queues) are read when scraped, from the sources a process
 * registered (see `addGaugeSource`).
 */
export const registry = client.register;

const seconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const histogram = (name: string, help: string, labelNames: string[]) =>
  (registry.getSingleMetric(name) as client.Histogram<string> | undefined) ?? new client.Histogram({ name, help, labelNames, buckets: seconds });
const counter = (name: string, help: string, labelNames: string[] = []) =>
  (registry.getSingleMetric(name) as client.Counter<string> | undefined) ?? new client.Counter({ name, help, labelNames });

/** Something that reports gauge values when Prometheus scrapes: a gateway's WebSocket server, a worker's queues. */
export type GaugeSource = () => Promise<GaugeSample[]> | GaugeSample[];
export interface GaugeSample {
  name: GaugeName;
  labels?: Record<string, string>;
  value: number;
}

const GAUGES = {
  booking_websocket_connections: 'Open graphql-ws connections',
  booking_websocket_subscriptions: 'Open GraphQL subscriptions',
  booking_outbox_backlog: 'Outbox rows not yet dispatched',
  booking_outbox_oldest_age_seconds: 'Age of the oldest outbox row not yet dispatched (0 when none)',
  booking_queue_jobs: 'BullMQ jobs per queue and state (waiting, active, delayed, failed)',
} as const;
export type GaugeName = keyof typeof GAUGES;

const sources = new Set<GaugeSource>();

/** Registers a source of gauge values; returns the function that removes it (on close). */
export function addGaugeSource(source: GaugeSource): () => void {
  sources.add(source);
  return () => sources.delete(source);
}

for (const [name, help] of Object.entries(GAUGES)) {
  if (registry.getSingleMetric(name)) continue;
  new client.Gauge({
    name,
    help,
    labelNames: name === 'booking_queue_jobs' ? ['queue', 'state'] : [],
    async collect() {
      this.reset();
      const samples = (await Promise.all([...sources].map(async (source) => source()))).flat();
      for (const sample of samples) if (sample.name === name) this.inc(sample.labels ?? {}, sample.value);
    },
  });
}

export const metrics = {
  httpDuration: histogram('booking_http_request_duration_seconds', 'HTTP requests by method, route pattern and status', ['method', 'route', 'status']),
  graphqlDuration: histogram('booking_graphql_request_duration_seconds', 'GraphQL operations over HTTP by operation type, root field and status (ok or the error code)', [
    'operation',
    'field',
    'status',
  ]),
  bookings: counter('booking_bookings_total', 'Bookings made through the booking flow, by the state they got (BOOKED, REQUESTED)', ['state']),
  holdsCreated: counter('booking_holds_created_total', 'Holds (reservations) placed'),
  holdsExpired: counter('booking_holds_expired_total', 'Holds removed because their time was up'),
  rejections: counter('booking_rejected_requests_total', 'Answers 409, 412 and 429 (REST, GraphQL, WebSocket upgrades), by status and error code', ['status', 'code']),
  mailFailures: counter('booking_mail_failures_total', 'Failed mail attempts; final="true" when the mail was given up (FAILED)', ['final']),
  transactionRetries: counter('booking_transaction_retries_total', 'Transactions run again after a deadlock or serialization failure, by SQLSTATE', ['code']),
  ormTransactionFallbacks: counter(
    'booking_orm_transaction_fallbacks_total',
    'Booking writes and hold expiries run again in an ORM transaction (neighbouring slots to announce, expired holds to release, a slot claimed meanwhile, a hold that is not the last of its slot)',
  ),
};

/** Counts an answer that refused the request for a reason clients handle (conflict, taken slot, rate limit). */
export function countRejection(status: number, code: string): void {
  if (status === 409 || status === 412 || status === 429) metrics.rejections.inc({ status: String(status), code });
}

let defaultsStarted = false;
/** Process metrics (CPU, memory, event loop lag, GC) once per process. */
export function collectProcessMetrics(): void {
  if (defaultsStarted) return;
  defaultsStarted = true;
  client.collectDefaultMetrics({ register: registry });
}

/** The text Prometheus scrapes, and its content type. */
export async function metricsText(): Promise<{ contentType: string; text: string }> {
  return { contentType: registry.contentType, text: await registry.metrics() };
}
