/** A minimal HTTP client for the REST facade and GraphQL, over real sockets. */
export interface HttpResult<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface ApiClient {
  baseUrl: string;
  request<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResult<T>>;
  get<T = any>(path: string, headers?: Record<string, string>): Promise<HttpResult<T>>;
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResult<T>>;
  put<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResult<T>>;
  delete<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResult<T>>;
  graphql<T = any>(query: string, variables?: Record<string, unknown>): Promise<HttpResult<{ data?: T; errors?: any[] }>>;
}

export function apiClient(baseUrl: string, key?: string): ApiClient {
  const request = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const init: RequestInit = {
      method,
      redirect: 'manual',
      headers: { ...(key ? { 'X-SERVICE-CLIENT-ID': key } : {}), ...headers },
    };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const response = await fetch(baseUrl + path, init);
    const text = await response.text();
    let parsed: unknown = undefined;
    if (text && (response.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
    return { status: response.status, body: parsed as any, text, headers: response.headers };
  };
  return {
    baseUrl,
    request,
    get: (path, headers) => request('GET', path, undefined, headers),
    post: (path, body, headers) => request('POST', path, body ?? {}, headers),
    put: (path, body, headers) => request('PUT', path, body ?? {}, headers),
    delete: (path, body, headers) => request('DELETE', path, body, headers),
    graphql: (query, variables) => request('POST', '/graphql', { query, variables }),
  };
}

/** A fresh unique suffix for references, so suites never collide. */
let counter = 0;
export const unique = (prefix = 'x'): string => `${prefix}${Date.now().toString(36)}${(counter++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;
