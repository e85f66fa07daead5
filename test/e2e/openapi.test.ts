import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_ENDPOINTS, isPublicFlow, openApiPath } from '../../schema/rest/openapi/document.js';
import { ROUTES } from '../../schema/rest/routes.js';
import { setupBookable, type BookingFixture } from '../support/booking-fixtures.js';
import { book, reserve, upcoming } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import type { HttpResult } from '../support/http.js';
import { enc } from '../support/offerings-fixtures.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

describe('OpenAPI document and reference page', () => {
  let app: TestApp;
  let doc: any;
  let ajv: Ajv2020;

  beforeAll(async () => {
    app = await startTestApp();
    const res = await app.anonymous.get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    doc = res.body;
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'doc', components: doc.components });
  });
  afterAll(async () => app?.close());

  /** Checks a real answer against the schema the document gives for that path, method and status. */
  function expectDocumented(method: string, path: string, res: HttpResult): void {
    const operation = doc.paths[path]?.[method];
    expect(operation, `${method} ${path} documented`).toBeDefined();
    const response = operation.responses[String(res.status)];
    expect(response, `${method} ${path} documents status ${res.status}`).toBeDefined();
    if (res.status === 204) return expect(response.content).toBeUndefined();
    const schema = JSON.parse(JSON.stringify(response.content['application/json'].schema).replaceAll('"#/components/', '"doc#/components/'));
    const validate = ajv.compile(schema);
    expect(validate(res.body), `${method} ${path} ${res.status}: ${JSON.stringify(validate.errors)}`).toBe(true);
  }

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents every route of the table, and nothing else', () => {
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => METHODS.includes(key))
        .map((method) => `${method} ${path}`),
    );
    // The CORS preflight is answered for every path of the public flow (middleware, not a route of the table).
    const preflights = [...new Set(ROUTES.filter(isPublicFlow).map((route) => route.path))].map((path) => ({ method: 'options', path }));
    expect(preflights.map((route) => route.path)).toContain('/resources/:ref/upcoming_bookables');
    const served = [...ROUTES, ...GATEWAY_ENDPOINTS, ...preflights].map((route) => `${route.method} ${openApiPath(route.path)}`);
    expect(new Set(served).size).toBe(served.length);
    expect(documented.sort()).toEqual(served.sort());
  });

  it('gives every CRM route the key scheme and its 401/403/404, every route a 400 with the error body', () => {
    expect(doc.components.securitySchemes.crmKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-SERVICE-CLIENT-ID' });
    const operationIds = new Set<string>();
    for (const route of ROUTES) {
      const operation = doc.paths[openApiPath(route.path)][route.method];
      operationIds.add(operation.operationId);
      expect(operation.responses['400'], `${route.method} ${route.path}`).toBeDefined();
      if (route.auth === 'crm') {
        expect(operation.security).toEqual([{ crmKey: [] }]);
        for (const status of ['401', '403', '404']) {
          expect(operation.responses[status].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
        }
      } else {
        expect(operation.security).toBeUndefined();
      }
      const params = (operation.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
      expect(params.sort()).toEqual([...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]).sort());
    }
    expect(operationIds.size).toBe(ROUTES.length);
  });

  it('documents 413 on every route with a body, 429 with Retry-After and the CORS preflight on the public flow', async () => {
    for (const route of ROUTES) {
      const operation = doc.paths[openApiPath(route.path)][route.method];
      const where = `${route.method} ${route.path}`;
      if (route.doc.body) expect(operation.responses['413'], where).toBeDefined();
      if (isPublicFlow(route)) {
        expect(operation.responses['429'].headers['Retry-After'], where).toBeDefined();
        const preflight = doc.paths[openApiPath(route.path)].options;
        expect(Object.keys(preflight.responses['200'].headers), where).toEqual(expect.arrayContaining(['Access-Control-Max-Age', 'Access-Control-Allow-Methods']));
      } else {
        expect(operation.responses['429'], where).toBeUndefined();
      }
    }
    // What the document promises is what the preflight answers.
    const preflight = await fetch(`${app.baseUrl}/resources/x/upcoming_bookables`, { method: 'OPTIONS', headers: { Origin: 'https://shop.example' } });
    expect(preflight.status).toBe(200);
    const documented = doc.paths['/resources/{ref}/upcoming_bookables'].options.responses['200'].headers;
    for (const [name, header] of Object.entries(documented as Record<string, { schema: { const: string } }>)) expect(preflight.headers.get(name), name).toBe(header.schema.const);
  });

  it('describes the deliveries sent to webhook endpoints (OpenAPI 3.1 webhooks)', () => {
    const event = doc.webhooks.appointmentEvent.post;
    expect(event.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/WebhookEvent' });
    expect(event.parameters.map((p: any) => `${p.in}:${p.name}`)).toEqual(['header:X-Booking-Signature', 'header:X-Booking-Delivery', 'header:X-Booking-Event']);
  });

  it('describes request bodies with the schemas the services parse', () => {
    const user = doc.paths['/crms/{crmId}/user'].post.requestBody.content['application/json'].schema;
    expect(user.required).toEqual(expect.arrayContaining(['reference', 'email']));
    const reserveBody = doc.paths['/rest/1/resources/{ref}/reserve_appointment'].post.requestBody.content['application/json'].schema;
    expect(JSON.stringify(reserveBody)).toContain('timeslot_uuid');
    const deleteResource = doc.paths['/crms/{crmId}/provider/{providerRef}/resources/{resourceRef}'].delete;
    expect(deleteResource.parameters.find((p: any) => p.name === 'ignoreFutureAppointments')).toMatchObject({ in: 'query' });
    expect(deleteResource.responses['204'].content).toBeUndefined();
  });

  it('matches what the service really answers (wrappers, plain arrays, 201/200/204, errors)', async () => {
    const f: BookingFixture = await setupBookable(app);
    const P = `/crms/{crmId}/provider/{providerRef}`;
    const base = `/crms/${f.crmId}/provider/${enc(f.providerRef)}`;
    expectDocumented('get', '/crms/{crmId}/user/{reference}', await f.api.get(`/crms/${f.crmId}/user/${enc(f.ownerRef)}`));
    expectDocumented('get', '/crms/{crmId}/account/{reference}', await f.api.get(`/crms/${f.crmId}/account/${enc(f.accountRef)}`));
    expectDocumented('get', '/crms/{crmId}/provider/{reference}', await f.api.get(`/crms/${f.crmId}/provider/${enc(f.providerRef)}`));
    expectDocumented('get', `${P}/staff`, await f.api.get(`${base}/staff`));
    expectDocumented('get', `${P}/products`, await f.api.get(`${base}/products`));
    expectDocumented('get', `${P}/resources`, await f.api.get(`${base}/resources`));
    expectDocumented('get', `${P}/resources/{resourceRef}/channels`, await f.api.get(`${base}/resources/${enc(f.resourceRef)}/channels`));
    expectDocumented('get', '/resources/{ref}/upcoming_bookables', await upcoming(app.anonymous, f.resourceUuid));
    const held = await reserve(app.anonymous, f);
    expectDocumented('post', '/rest/1/resources/{ref}/reserve_appointment', held);
    expectDocumented('post', '/resources/{ref}/create_appointment_with_consumer', await book(app.anonymous, f, { placeholder_id: held.body.participation.customer_uuid }));
    expectDocumented('get', `${P}/resource/{resourceRef}/timeslots`, await f.api.get(`${base}/resource/${enc(f.resourceRef)}/timeslots?from=2000-01-01T00:00&to=2100-01-01T00:00`));
    expectDocumented('get', `${P}/appointments`, await f.api.get(`${base}/appointments`));
    expectDocumented('get', `${P}/customers/{customerRef}`, await f.api.get(`${base}/customers/nobody`));
    expectDocumented('post', '/crms/{crmId}/user', await f.api.post(`/crms/${f.crmId}/user`, { reference: 'x' }));
    expectDocumented('get', `${P}/products`, await app.anonymous.get(`${base}/products`));
    expectDocumented('get', `${P}/products`, await f.api.get(`/crms/${f.crmId}/provider/unknown/products`));
    expectDocumented('get', '/healthz', await app.anonymous.get('/healthz'));
  });

  it('serves a reference page that loads its renderer and the document from this server only', async () => {
    const page = await app.anonymous.get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('/openapi.json');
    const scripts = [...page.text.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts).toEqual(['/docs/renderer.js']);
    expect(page.text).not.toMatch(/https?:\/\//);
    const renderer = await app.anonymous.get('/docs/renderer.js');
    expect(renderer.status).toBe(200);
    expect(renderer.headers.get('content-type')).toMatch(/javascript/);
    expect(renderer.text).toContain('createApiReference');
  });
});
