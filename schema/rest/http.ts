import type { AnyZodObject, ZodTypeAny } from 'zod';
import type { Context } from '../../services/kernel/context.js';
import { DomainError, validationError } from '../../services/kernel/errors.js';

export const API_INFO = { version: '1' } as const;

export interface RestRequest {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/** What a route answers: a status and a JSON body, or no body at all (204). */
export interface RestResponse {
  status: number;
  body?: unknown;
  /** For the few routes that answer HTML (the cancel page) instead of JSON. */
  html?: string;
  /** A JSON body serialized beforehand (a cached answer), sent as is. */
  json?: Buffer;
  /** The same body gzip-compressed, sent instead of `json` to a client whose Accept-Encoding asks for gzip. */
  gzipped?: () => Promise<Buffer>;
  /** Further response headers (e.g. the ETag of a pre-serialized body). */
  headers?: Record<string, string>;
}

export type Method = 'get' | 'post' | 'put' | 'delete';

/** One answer of a route in the OpenAPI document: JSON of a schema, HTML, or nothing (204). */
export interface ResponseDoc {
  description: string;
  json?: ZodTypeAny;
  html?: true;
  /** Response headers worth knowing, by name, with what they mean. */
  headers?: Record<string, string>;
}

/**
 * What the OpenAPI document says about a route (schema/rest/openapi/document.ts).
 * `body` is the zod schema the service parses the body with; path parameters
 * come from the path. Every route also answers 400 with the error body, and a
 * CRM route 401, 403 and 404.
 */
export interface RouteDoc {
  tag: string;
  summary: string;
  description?: string;
  body?: ZodTypeAny;
  /** An example request body. */
  example?: unknown;
  query?: AnyZodObject;
  responses: Partial<Record<number, ResponseDoc>>;
  /** Further error statuses, with what they mean (e.g. `{ 409: 'reference taken' }`). */
  errors?: Partial<Record<number, string>>;
}

/** One documented endpoint: its path, who may call it, the service call behind it and its documentation. */
export interface Route {
  method: Method;
  path: string;
  auth: 'crm' | 'public';
  doc: RouteDoc;
  handle(ctx: Context, req: RestRequest): Promise<RestResponse>;
}

/** `{ "api-info": { "version": "1" }, "<entity>": value }`, as the spec wraps single entities. */
export const wrap = (entity: string, value: unknown): Record<string, unknown> => ({ 'api-info': API_INFO, [entity]: value });

export const ok = (body: unknown, status = 200): RestResponse => ({ status, body });
export const noContent = (): RestResponse => ({ status: 204 });

/** Whether the request asks for an answer computed afresh (`Cache-Control: no-cache`, or `Pragma: no-cache`). */
export function wantsFresh(headers: RestRequest['headers']): boolean {
  const values = [headers['cache-control'], headers.pragma].flat().filter((value): value is string => typeof value === 'string');
  return values.some((value) => value.split(',').some((directive) => directive.trim().toLowerCase() === 'no-cache'));
}

/** The error body of every REST endpoint. */
export function errorBody(error: DomainError): Record<string, unknown> {
  return { 'api-info': API_INFO, errors: [{ errorCode: error.restCode ?? error.code, message: error.message }] };
}

/**
 * A boolean query parameter. `?flag`, `?flag=true` and `?flag=1` are true;
 * `false`/`0` false, in any case (`TRUE`, `True`); absent gives the default;
 * anything else is a 400.
 */
export function booleanQuery(query: Record<string, unknown>, name: string, fallback: boolean): boolean {
  const raw = query[name];
  if (raw === undefined) return fallback;
  const last = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  const value = typeof last === 'string' ? last.trim().toLowerCase() : last;
  if (value === '' || value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw validationError(`query parameter ${name} must be true or false`);
}

/** A single-valued string query parameter; an empty value counts as absent. */
export function stringQuery(query: Record<string, unknown>, name: string): string | undefined {
  const raw = query[name];
  const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw validationError(`query parameter ${name} must be a string`);
  return value;
}

/** A repeatable string query parameter (`?ref=a&ref=b`). */
export function listQuery(query: Record<string, unknown>, name: string): string[] {
  const raw = query[name];
  if (raw === undefined) return [];
  const values = Array.isArray(raw) ? raw : [raw];
  if (!values.every((value) => typeof value === 'string')) throw validationError(`query parameter ${name} must be a string`);
  return (values as string[]).filter((value) => value !== '');
}
