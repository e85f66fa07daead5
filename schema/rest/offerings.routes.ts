import {
  generalProfileInput,
  getContactProfile,
  getGeneralContactProfile,
  providerProfileInput,
  saveContactProfile,
  saveGeneralContactProfile,
  toContactProfileView,
  toGeneralContactProfileView,
} from '../../services/contact-profiles/contact-profile.service.js';
import { listProducts, productInput, saveProduct, toProductView } from '../../services/products/product.service.js';
import { deleteResource } from '../../services/resources/resource-deletion.service.js';
import { listResources, resourceInput, resourceUpdateInput, saveResource, updateResource } from '../../services/resources/resource.service.js';
import { resourceViewOf, toResourceView } from '../../services/resources/resource.view.js';
import { booleanQuery, noContent, ok, type Route, wrap } from './http.js';
import { flagParam } from './openapi/query-params.js';
import { contactProfileView, generalContactProfileView, productView, resourceView, wrapped } from './openapi/response-schemas.js';
import { z } from './openapi/zod-openapi.js';

const tag = 'Offerings';

/** Spec section "Offerings": products, resources, contact profiles. */
export const offeringsRoutes: Route[] = [
  {
    method: 'post',
    path: '/crms/:crmId/provider/:providerRef/products',
    auth: 'crm',
    doc: {
      tag,
      summary: 'Create or update a product',
      body: productInput,
      example: { reference: 'viewing@crm', name: 'Besichtigung', minDuration: 30, maxDuration: 60 },
      responses: { 201: { description: 'created', json: wrapped('product', productView) }, 200: { description: 'updated', json: wrapped('product', productView) } },
    },
    async handle(ctx, req) {
      const { product, created } = await saveProduct(ctx, req.params.providerRef!, req.body);
      return ok(wrap('product', toProductView(product)), created ? 201 : 200);
    },
  },
  {
    method: 'get',
    path: '/crms/:crmId/provider/:providerRef/products',
    auth: 'crm',
    doc: { tag, summary: 'List the products of a provider', responses: { 200: { description: 'the products', json: z.array(productView) } } },
    handle: async (ctx, req) => ok((await listProducts(ctx, req.params.providerRef!)).map(toProductView)),
  },
  {
    method: 'post',
    path: '/crms/:crmId/provider/:providerRef/resources',
    auth: 'crm',
    doc: {
      tag,
      summary: 'Create or update a resource',
      description: 'Fields left out keep their value, `null` clears. A resource that lists no products offers every product of its provider.',
      body: resourceInput,
      example: { reference: 'flat1@crm', publicName: 'Wohnung Musterstraße', internalName: 'flat 1', products: ['viewing@crm'], address: { city: 'Berlin', zip: '10115', street: 'Musterstraße', number: '1' } },
      query: z.object({ onDuplicateRaise: flagParam('409 instead of an update when the reference exists') }),
      responses: { 201: { description: 'created', json: resourceView }, 200: { description: 'updated', json: resourceView } },
      errors: { 409: 'the reference exists (onDuplicateRaise)' },
    },
    async handle(ctx, req) {
      const onDuplicateRaise = booleanQuery(req.query, 'onDuplicateRaise', false);
      const { resource, created } = await saveResource(ctx, req.params.providerRef!, req.body, { onDuplicateRaise });
      return ok(toResourceView(resource), created ? 201 : 200);
    },
  },
  {
    method: 'post',
    path: '/crms/:crmId/provider/:providerRef/resources/:resourceRef',
    auth: 'crm',
    doc: { tag, summary: 'Update a resource', body: resourceUpdateInput, responses: { 202: { description: 'updated', json: resourceView } } },
    handle: async (ctx, req) => ok(toResourceView(await updateResource(ctx, req.params.providerRef!, req.params.resourceRef!, req.body)), 202),
  },
  {
    method: 'get',
    path: '/crms/:crmId/provider/:providerRef/resources',
    auth: 'crm',
    doc: { tag, summary: 'List the resources of a provider', responses: { 200: { description: 'the resources', json: z.array(resourceView) } } },
    handle: async (ctx, req) => ok((await listResources(ctx, req.params.providerRef!)).map(resourceViewOf)),
  },
  {
    method: 'delete',
    path: '/crms/:crmId/provider/:providerRef/resources/:resourceRef',
    auth: 'crm',
    doc: {
      tag,
      summary: 'Delete a resource',
      description: 'With `ignoreFutureAppointments=true`, its future appointments are cancelled (participants get the cancellation mail).',
      query: z.object({ ignoreFutureAppointments: flagParam('cancel future appointments instead of answering 409') }),
      responses: { 204: { description: 'deleted' } },
      errors: { 409: 'the resource has future active appointments' },
    },
    async handle(ctx, req) {
      const ignoreFutureAppointments = booleanQuery(req.query, 'ignoreFutureAppointments', false);
      await deleteResource(ctx, req.params.providerRef!, req.params.resourceRef!, { ignoreFutureAppointments });
      return noContent();
    },
  },
  {
    method: 'get',
    path: '/crms/:crmId/user/:userRef/generalContactProfile',
    auth: 'crm',
    doc: { tag, summary: "Get a user's general contact profile", responses: { 200: { description: 'the profile', json: generalContactProfileView } } },
    handle: async (ctx, req) => ok(toGeneralContactProfileView(await getGeneralContactProfile(ctx, req.params.userRef!))),
  },
  {
    method: 'put',
    path: '/crms/:crmId/user/:userRef/generalContactProfile',
    auth: 'crm',
    doc: {
      tag,
      summary: "Create or replace a user's general contact profile",
      body: generalProfileInput,
      responses: { 200: { description: 'the profile', json: generalContactProfileView } },
    },
    handle: async (ctx, req) => ok(toGeneralContactProfileView(await saveGeneralContactProfile(ctx, req.params.userRef!, req.body))),
  },
  {
    method: 'post',
    path: '/crms/:crmId/provider/:providerRef/contactProfile',
    auth: 'crm',
    doc: {
      tag,
      summary: 'Create or update a contact profile of a provider',
      body: providerProfileInput,
      responses: {
        201: { description: 'created', json: wrapped('contactProfile', contactProfileView) },
        200: { description: 'updated', json: wrapped('contactProfile', contactProfileView) },
      },
    },
    async handle(ctx, req) {
      const { profile, created } = await saveContactProfile(ctx, req.params.providerRef!, req.body);
      return ok(wrap('contactProfile', toContactProfileView(profile)), created ? 201 : 200);
    },
  },
  {
    method: 'get',
    path: '/crms/:crmId/provider/:providerRef/contactProfile/:profileRef',
    auth: 'crm',
    doc: { tag, summary: 'Get a contact profile of a provider', responses: { 200: { description: 'the profile', json: wrapped('contactProfile', contactProfileView) } } },
    handle: async (ctx, req) => ok(wrap('contactProfile', toContactProfileView(await getContactProfile(ctx, req.params.providerRef!, req.params.profileRef!)))),
  },
];
