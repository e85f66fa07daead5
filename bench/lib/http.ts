import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface HttpAnswer {
  /** HTTP status, or 0 when no answer came (timeout, connection error). */
  status: number;
  /** Parsed JSON body, or null (empty, not JSON, or no answer). */
  body: any;
  bytes: number;
  /** Milliseconds from sending until the whole body was read. */
  ms: number;
  /** performance.now() when the whole answer had arrived (or the request failed). */
  at: number;
  /** Date.now() at the same moment, for comparing with the service's wall clock. */
  wallAt: number;
  error?: string;
}

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

/**
 * Keep-alive connections for every request of the run. node:http rather than
 * fetch: fetch (undici's web streams) costs the load generator several times
 * the CPU per request, and the load generator shares the 2 cores with the
 * service it measures (B0's autocannon is lean too).
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 2_048 });

/**
 * One HTTP request with a timeout; never throws: failures come back as
 * status 0 with `error`. A request sent on a kept-alive connection that the
 * service closed for idleness at that moment (it waited about its
 * keep-alive timeout, e.g. between two phases) fails with ECONNRESET before
 * the service read it: sent once more on a new connection, as node's
 * documentation of `request.reusedSocket` advises.
 */
export function request(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<HttpAnswer> {
  return send(baseUrl, method, path, options, true);
}

function send(baseUrl: string, method: string, path: string, options: RequestOptions, mayResend: boolean): Promise<HttpAnswer> {
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? 30_000;
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string | number> = { ...options.headers };
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = Buffer.byteLength(payload);
  }
  return new Promise((resolve) => {
    let settled = false;
    const finish = (answer: Omit<HttpAnswer, 'ms' | 'at' | 'wallAt'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const at = performance.now();
      resolve({ ...answer, ms: at - started, at, wallAt: Date.now() });
    };
    const failed = (error: string) => finish({ status: 0, body: null, bytes: 0, error });
    const req = http.request(baseUrl + path, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (error) => failed(error.message));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        let body: any = null;
        if (raw.length) {
          try {
            body = JSON.parse(raw.toString('utf8'));
          } catch {
            body = null;
          }
        }
        finish({ status: res.statusCode ?? 0, body, bytes: raw.length });
      });
    });
    const timer = setTimeout(() => {
      failed(`timed out after ${timeoutMs} ms`);
      req.destroy();
    }, timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (mayResend && !settled && req.reusedSocket && error.code === 'ECONNRESET') {
        settled = true;
        clearTimeout(timer);
        resolve(send(baseUrl, method, path, options, false));
        return;
      }
      failed(error.message);
    });
    req.end(payload);
  });
}

/** Short description of a failed answer, for progress lines and error reports. */
export function describeFailure(answer: HttpAnswer): string {
  if (answer.status === 0) return answer.error ?? 'no answer';
  const first = answer.body?.errors?.[0];
  return `${answer.status}${first ? ` ${first.errorCode ?? ''} ${first.message ?? ''}` : ''}`.trim();
}

/** The service as the benchmark talks to it: the CRM API with its key, and the public booking flow. */
export class Api {
  constructor(
    readonly baseUrl: string,
    readonly crmId: string,
    readonly key: string,
  ) {}

  /** A /crms/:crmId request; `path` starts after the crmId. */
  crm(method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<HttpAnswer> {
    return request(this.baseUrl, method, `/crms/${this.crmId}${path}`, { body, headers: { 'x-service-client-id': this.key }, timeoutMs });
  }

  /** A CRM request that must succeed (seeding): throws naming the request otherwise. */
  async crmOk(method: string, path: string, body?: unknown, timeoutMs = 60_000): Promise<any> {
    const answer = await this.crm(method, path, body, timeoutMs);
    if (answer.status < 200 || answer.status >= 300) throw new Error(`${method} /crms/${this.crmId}${path}: ${describeFailure(answer)}`);
    return answer.body;
  }

  public(method: string, path: string, options: RequestOptions = {}): Promise<HttpAnswer> {
    return request(this.baseUrl, method, path, options);
  }
}
