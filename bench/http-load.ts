import autocannon from 'autocannon';

/** A plain HTTP flood with autocannon: `connections` clients, each sending the next request as soon as its answer arrived. */
export interface FloodOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
  /** Seconds a single request may take before autocannon gives up on it (counted as a timeout). */
  timeoutSeconds?: number;
  /** A sequence each connection sends in turn, over and over (instead of one request to `url`; `url` then gives the origin). */
  requests?: { method: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string }[];
}

export interface FloodResult {
  /** Answers with a 2xx status per second of the flood. */
  requestsPerSecond: number;
  ok: number;
  non2xx: number;
  /** Connection errors, timeouts included. */
  errors: number;
  timeouts: number;
  seconds: number;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  bytesPerSecond: number;
}

export async function flood(options: FloodOptions): Promise<FloodResult> {
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    duration: options.seconds,
    timeout: options.timeoutSeconds ?? Math.max(10, options.seconds * 2),
    ...(options.requests ? { requests: options.requests } : {}),
  });
  const ok = result['2xx'];
  const seconds = result.duration > 0 ? result.duration : options.seconds;
  const answered = ok + result.non2xx > 0;
  return {
    requestsPerSecond: ok / seconds,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds,
    latencyP50Ms: answered ? result.latency.p50 : null,
    latencyP99Ms: answered ? result.latency.p99 : null,
    bytesPerSecond: result.throughput.average,
  };
}
