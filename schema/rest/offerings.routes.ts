import {
  getContactProfile,
  getGeneralContactProfile,
  saveContactProfile,
  saveGeneralContactProfile,
  toContactProfileView,
  toGeneralContactProfileView,
} from '../../services/contact-profiles/contact-profile.service.js';
import { listProducts, saveProduct, toProductView } from '../../services/products/product.service.js';
import { deleteResource } from '../../services/resources/resource-deletion.service.js';
import { listResources, saveResource, updateResource } from '../../services/resources/resource.service.js';
import { toResourceView } from '../../services/resources/resource.view.js';
import { booleanQuery, noContent, ok, type Route, wrap } from './http.js';

/** Spec section "Offerings": products, resources, contact profiles. */
export const offeringsRoutes: Route[] = [
  {
    method: 'post',
    path: '/crms/:crmId/provider/:providerRef/products',
    auth: 'crm',
    async handle(ctx, req) {
      const { product, created } = await saveProduct(ctx, req.params.providerRef!, req.body);
      return ok(wrap('product', toProductView(product)), created ? 201 : 200);
    },
  },
  {
    method: 'get',
    path: '/crms/:crmId/provider/:providerRef/products',
    auth: 'crm',
    handle: async (ctx, req) => ok((await listProducts(ctx, req.params.providerRef!)).map(toProductView)),
  },
  {
    method: 'post',
    path: '/crms/:crmId/provider/:providerRef/resources',
    auth: 'crm',
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
    handle: async (ctx, req) => ok(toResourceView(await updateResource(ctx, req.params.providerRef!, req.params.resourceRef!, req.body)), 202),
  },
  {
    method: 'get',
    path: '/crms/:crmId/provider/:providerRef/resources',
    auth: 'crm',
    handle: async (ctx, req) => ok((await listResources(ctx, req.params.providerRef!)).map(toResourceView)),
  },
  {
    method: 'delete',
    path: '/crms/:crmId/provider/:providerRef/resources/:resourceRef',
    auth: 'crm',
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
    handle: async (ctx, req) => ok(toGeneralContactProfileView(await getGeneralContactProfile(ctx, req.params.userRef!))),
  },
  {
    method: 'put',
    path: '/crms/:crmId/user/:userRef/generalContactProfile',
    auth: 'crm',
    handle: async (ctx, req) => ok(toGeneralContactProfileView(await saveGeneralContactProfile(ctx, req.params.userRef!, req.body))),
  },
  {
    method: 'post',
    path: '/crms/:crmId/provider/:providerRef/contactProfile',
    auth: 'crm',
    async handle(ctx, req) {
      const { profile, created } = await saveContactProfile(ctx, req.params.providerRef!, req.body);
      return ok(wrap('contactProfile', toContactProfileView(profile)), created ? 201 : 200);
    },
  },
  {
    method: 'get',
    path: '/crms/:crmId/provider/:providerRef/contactProfile/:profileRef',
    auth: 'crm',
    handle: async (ctx, req) => ok(wrap('contactProfile', toContactProfileView(await getContactProfile(ctx, req.params.providerRef!, req.params.profileRef!)))),
  },
];
