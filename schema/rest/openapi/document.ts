import { OpenApiGeneratorV31, OpenAPIRegistry, type ResponseConfig, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { Route } from '../http.js';
import { CORS_HEADERS } from '../../http-middleware.js';
import { errorBody, healthView, webhookEventBody } from './response-schemas.js';
import { z } from './zod-openapi.js';

export const CRM_KEY_SCHEME = 'crmKey';

/** Endpoints the gateway serves beside the route table (app.ts), documented as well. */
export const GATEWAY_ENDPOINTS: { method: 'get'; path: string }[] = [
  { method: 'get', path: '/healthz' },
  { method: 'get', path: '/openapi.json' },
  { method: 'get', path: '/docs' },
];

const PATH_PARAMETERS: Record<string, string> = {
  crmId: 'your CRM id, as `npm run admin -- create-crm` named it',
  reference: 'the reference your CRM gave',
  providerRef: 'the reference of the provider',
  resourceRef: 'the reference of the resource',
  userRef: 'the reference of the user',
  profileRef: 'the reference of the contact profile',
  timeslotRef: 'the reference of the timeslot',
  participationRef: 'the reference of the participation (booking-flow participations: their UUID)',
  customerRef: 'the reference of the customer',
  channelKey: 'RESOURCE_PUBLIC, RESOURCE_EXCLUSIVE, RESOURCE_REFERENCE or CALENDAR_PUBLIC',
  ref: 'the resource: its UUID, `resourceId@platform` or `resourceId@providerUuid@platform`',
  token: 'the token of the cancel link',
  webhookId: 'the id of the webhook',
};

const COMMON_ERRORS: Record<number, string> = {
  400: 'bad input: the message names the field',
  401: 'missing or unknown X-SERVICE-CLIENT-ID',
  403: 'the key belongs to another CRM',
  404: 'unknown reference (another CRM’s references too)',
};

/** `/crms/:crmId/user/:reference` → `/crms/{crmId}/user/{reference}`. */
export const openApiPath = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/**
 * The OpenAPI 3.1 document of the REST facade, generated from the route
 * table: each route's body is the zod schema its service parses with, its
 * answers the schemas of its `doc`.
 */
export function buildOpenApiDocument(routes: Route[], serverUrl: string): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', CRM_KEY_SCHEME, {
    type: 'apiKey',
    in: 'header',
    name: 'X-SERVICE-CLIENT-ID',
    description: 'The key of your CRM (`npm run admin -- create-crm <crmId>`); it must belong to the `crmId` of the path.',
  });
  registry.register('Error', errorBody);
  registry.register('WebhookEvent', webhookEventBody);
  for (const route of routes) registry.registerPath(toRouteConfig(route));
  for (const path of new Set(routes.filter(isPublicFlow).map((route) => route.path))) registry.registerPath(preflightOf(path));
  registerGatewayEndpoints(registry);
  registerOutgoingWebhook(registry);
  const generator = new OpenApiGeneratorV31(registry.definitions);
  return generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Booking service REST API',
      version: '1',
      description:
        'Scheduling and booking: the CRM API under `/crms/{crmId}` (key in `X-SERVICE-CLIENT-ID`) and the public booking flow. ' +
        'Every error answers `{"api-info":{"version":"1"},"errors":[{"errorCode","message"}]}`. GraphQL is served at `/graphql`.',
    },
    servers: [{ url: serverUrl }],
    tags: [{ name: 'Setup' }, { name: 'Offerings' }, { name: 'Scheduling' }, { name: 'Booking flow' }, { name: 'Webhooks' }, { name: 'Service' }],
  });
}

function toRouteConfig(route: Route): RouteConfig {
  const { doc } = route;
  const params = pathParamsOf(route.path);
  const responses: Record<string, ResponseConfig> = {};
  for (const [status, response] of Object.entries(doc.responses)) {
    if (!response) continue;
    responses[status] = {
      description: response.description,
      ...(response.headers
        ? { headers: Object.fromEntries(Object.entries(response.headers).map(([name, description]) => [name, { description, schema: { type: 'string' as const } }])) }
        : {}),
      ...(response.json ? { content: { 'application/json': { schema: response.json } } } : {}),
      ...(response.html ? { content: { 'text/html': { schema: z.string() } } } : {}),
    };
  }
  const errors: Record<number, string> = { 400: COMMON_ERRORS[400]!, ...(route.auth === 'crm' ? COMMON_ERRORS : {}), ...doc.errors };
  if (doc.body) errors[413] ??= 'the body is over 1 MB';
  for (const [status, description] of Object.entries(errors)) {
    if (responses[status]) continue;
    responses[status] = { description, content: { 'application/json': { schema: errorBody } } };
  }
  if (isPublicFlow(route) && !responses[429]) {
    responses[429] = {
      description: 'a limit of the public booking flow (errorCode RATE_LIMITED)',
      headers: { 'Retry-After': { description: 'seconds until it may be tried again', schema: { type: 'string' as const } } },
      content: { 'application/json': { schema: errorBody } },
    };
  }
  return {
    method: route.method,
    path: openApiPath(route.path),
    operationId: operationId(route),
    tags: [doc.tag],
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    ...(route.auth === 'crm' ? { security: [{ [CRM_KEY_SCHEME]: [] }] } : {}),
    request: {
      ...(params ? { params } : {}),
      ...(doc.query ? { query: doc.query } : {}),
      ...(doc.body
        ? { body: { required: true, content: { 'application/json': { schema: doc.body, ...(doc.example === undefined ? {} : { example: doc.example }) } } } }
        : {}),
    },
    responses,
  };
}

/** The consumer booking flow: no key, the public flow's limits (429), CORS with a preflight the spec documents. */
export const isPublicFlow = (route: Pick<Route, 'auth' | 'path'>): boolean => route.auth === 'public' && /^\/(resources|rest\/1\/resources|products)\//.test(route.path);

/** The CORS preflight of a public-flow path (answered for every such path, see http-middleware.ts). */
function preflightOf(path: string): RouteConfig {
  const params = pathParamsOf(path);
  return {
    method: 'options',
    path: openApiPath(path),
    operationId: operationId({ method: 'options', path }),
    tags: ['Booking flow'],
    summary: 'CORS preflight',
    ...(params ? { request: { params } } : {}),
    responses: {
      200: {
        description: 'no body; the CORS headers, with the caller’s Origin as Access-Control-Allow-Origin',
        headers: Object.fromEntries(Object.entries(CORS_HEADERS).map(([name, value]) => [name, { description: value, schema: { type: 'string' as const, const: value } }])),
      },
    },
  };
}

/** The path parameters of a route path (`:name`), described; undefined without any. */
function pathParamsOf(path: string) {
  const names = [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1]!);
  return names.length ? z.object(Object.fromEntries(names.map((name) => [name, z.string().openapi({ description: PATH_PARAMETERS[name] ?? name })]))) : undefined;
}

/** `post /crms/:crmId/provider/:providerRef/staff` → `postCrmsProviderStaff`, unique over the table. */
function operationId(route: { method: string; path: string }): string {
  const words = route.path
    .split('/')
    .filter((part) => part && !part.startsWith(':') && part !== 'crms')
    .flatMap((part) => part.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  const params = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1]!).filter((name) => name !== 'crmId');
  const by = params.length ? `By${params.map(capitalize).join('And')}` : '';
  return `${route.method}${words.map(capitalize).join('')}${by}`;
}

const capitalize = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

/** What the service sends to the endpoints registered with POST /crms/{crmId}/webhooks (OpenAPI 3.1 `webhooks`). */
function registerOutgoingWebhook(registry: OpenAPIRegistry): void {
  registry.registerWebhook({
    method: 'post',
    path: 'appointmentEvent',
    operationId: 'appointmentEvent',
    tags: ['Webhooks'],
    summary: 'An event of the appointmentChanged vocabulary, POSTed to your endpoint',
    description:
      'Verify `X-Booking-Signature` (`t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, key: your webhook secret) before parsing; ' +
      'answer 2xx within 10 s. Anything else is retried with exponential back-off for about 34 hours, with the same `id`.',
    request: {
      headers: z.object({
        'X-Booking-Signature': z.string().openapi({ example: 't=1809759731,v1=5f2b…' }),
        'X-Booking-Delivery': z.string().uuid(),
        'X-Booking-Event': z.string().openapi({ example: 'participation.state_changed' }),
      }),
      body: { required: true, content: { 'application/json': { schema: webhookEventBody } } },
    },
    responses: { 200: { description: 'any 2xx: delivered' }, 500: { description: 'anything else (or no answer): retried later' } },
  });
}

function registerGatewayEndpoints(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/healthz',
    operationId: 'getHealthz',
    tags: ['Service'],
    summary: 'Health of the gateway (PostgreSQL and Redis answer)',
    responses: { 200: { description: 'healthy', content: { 'application/json': { schema: healthView } } }, 503: { description: 'PostgreSQL or Redis does not answer', content: { 'application/json': { schema: healthView } } } },
  });
  registry.registerPath({
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenapiJson',
    tags: ['Service'],
    summary: 'This document',
    responses: { 200: { description: 'the OpenAPI 3.1 document', content: { 'application/json': { schema: z.record(z.unknown()) } } } },
  });
  registry.registerPath({
    method: 'get',
    path: '/docs',
    operationId: 'getDocs',
    tags: ['Service'],
    summary: 'This reference, rendered (works offline)',
    responses: { 200: { description: 'the reference page', content: { 'text/html': { schema: z.string() } } } },
  });
}
