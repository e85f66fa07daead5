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

/** One HTTP request with a timeout; never throws: failures come back as status 0 with `error`. */
export async function request(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<HttpAnswer> {
  const started = performance.now();
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  try {
    const response = await fetch(baseUrl + path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    });
    const text = await response.text();
    const at = performance.now();
    let body: any = null;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
    }
    return { status: response.status, body, bytes: Buffer.byteLength(text), ms: at - started, at, wallAt: Date.now() };
  } catch (error) {
    const at = performance.now();
    const name = error instanceof Error ? error.name : '';
    const message = name === 'TimeoutError' ? `timed out after ${options.timeoutMs ?? 30_000} ms` : error instanceof Error ? (error.cause as Error)?.message ?? error.message : String(error);
    return { status: 0, body: null, bytes: 0, ms: at - started, at, wallAt: Date.now(), error: message };
  }
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
    private readonly key: string,
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
