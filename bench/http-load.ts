import http from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { percentile } from './lib/stats.js';

/** A plain HTTP flood: `connections` keep-alive clients, each sending the next request as soon as its answer arrived. */
export interface FloodOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
  /** Seconds a single request may take before it is given up (counted as a timeout). */
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

/** The flood with autocannon: the leanest client for small answers (B0's). */
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

interface Outcome {
  status: number;
  bytes: number;
  timedOut: boolean;
}

/**
 * The flood for large answers: bodies are counted and dropped unread
 * (node:http, whose parser runs in C++). autocannon turns every body into
 * a JavaScript string; on P3's 0.6–0.75 MB listings that cost the load
 * generator more CPU than the gateway spent answering (perf: mostly memmove
 * and UTF-8 decoding in the benchmark's process), on the cores the two
 * share. Side by side on a 0.75 MB listing, 50 connections: autocannon
 * 265 req/s, this flood 834 req/s. For small answers autocannon is the
 * leaner client (B0: ~100 against ~160–220 µs of client CPU a request), so
 * B0 stays on it. Answers that arrive after `seconds` are not counted;
 * requests still under way then are aborted.
 */
export async function floodDiscardingBodies(options: FloodOptions): Promise<FloodResult> {
  const origin = new URL(options.url);
  const sequence = options.requests ?? [{ method: options.method ?? 'GET', path: `${origin.pathname}${origin.search}`, headers: options.headers, body: options.body }];
  const prepared = sequence.map((r) => {
    const body = r.body === undefined ? undefined : Buffer.from(r.body);
    const headers: Record<string, string | number> = { ...r.headers };
    if (body) headers['content-length'] = body.length;
    return { method: r.method, path: r.path, headers, body };
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections, maxFreeSockets: options.connections });
  const timeoutMs = (options.timeoutSeconds ?? Math.max(10, options.seconds * 2)) * 1000;
  const started = performance.now();
  const endsAt = started + options.seconds * 1000;
  const latencies: number[] = [];
  const totals = { ok: 0, non2xx: 0, errors: 0, timeouts: 0, bytes: 0 };
  const inFlight = new Set<http.ClientRequest>();
  const stopTimer = setTimeout(() => {
    for (const req of inFlight) req.destroy();
  }, options.seconds * 1000);

  const send = (spec: (typeof prepared)[number]) =>
    new Promise<Outcome>((resolve) => {
      let bytes = 0;
      let timedOut = false;
      const req = http.request({ host: origin.hostname, port: origin.port, method: spec.method, path: spec.path, headers: spec.headers, agent }, (res) => {
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, timedOut }));
        res.on('error', () => resolve({ status: 0, bytes, timedOut }));
      });
      inFlight.add(req);
      req.setTimeout(timeoutMs, () => {
        timedOut = true;
        req.destroy();
      });
      req.on('error', () => resolve({ status: 0, bytes, timedOut }));
      req.on('close', () => inFlight.delete(req));
      req.end(spec.body);
    });

  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      for (let i = 0; performance.now() < endsAt; i++) {
        const t0 = performance.now();
        const outcome = await send(prepared[i % prepared.length]!);
        const t1 = performance.now();
        // Cut off by the end of the flood: neither an answer nor an error of the service.
        if (t1 >= endsAt && outcome.status === 0 && !outcome.timedOut) break;
        totals.bytes += outcome.bytes;
        if (outcome.status === 0) {
          totals.errors++;
          if (outcome.timedOut) totals.timeouts++;
          continue;
        }
        if (t1 > endsAt) break;
        latencies.push(t1 - t0);
        if (outcome.status >= 200 && outcome.status < 300) totals.ok++;
        else totals.non2xx++;
      }
    }),
  );
  clearTimeout(stopTimer);
  agent.destroy();
  const seconds = options.seconds;
  return {
    requestsPerSecond: totals.ok / seconds,
    ok: totals.ok,
    non2xx: totals.non2xx,
    errors: totals.errors,
    timeouts: totals.timeouts,
    seconds,
    latencyP50Ms: latencies.length ? percentile(latencies, 50) : null,
    latencyP99Ms: latencies.length ? percentile(latencies, 99) : null,
    bytesPerSecond: totals.bytes / seconds,
  };
}
