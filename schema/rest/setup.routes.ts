import { createAccount, getAccount, toAccountView } from '../../services/accounts/account.service.js';
import { addStaff, createProvider, getProvider, listStaff, removeStaff, toProviderView } from '../../services/providers/provider.service.js';
import { createUser, getUser, verifyEmail } from '../../services/users/user.service.js';
import { toUserView } from '../../services/users/user.view.js';
import { noContent, ok, type Route, stringQuery, wrap } from './http.js';

/** Spec section "Setup": users, accounts, providers, staff. */
export const setupRoutes: Route[] = [
  {
    method: 'post',
    path: '/crms/:crmId/user',
    auth: 'crm',
    async handle(ctx, req) {
      const { user, outcome } = await createUser(ctx, req.body);
      return ok(wrap('user', toUserView(user)), outcome === 'created' ? 201 : 200);
    },
  },
  {
    method: 'get',
    path: '/crms/:crmId/user/:reference',
    auth: 'crm',
    handle: async (ctx, req) => ok(wrap('user', toUserView(await getUser(ctx, req.params.reference!)))),
  },
  {
    method: 'post',
    path: '/crms/:crmId/account',
    auth: 'crm',
    async handle(ctx, req) {
      const { account, created } = await createAccount(ctx, req.body);
      return ok(wrap('account', toAccountView(account)), created ? 201 : 200);
    },
  },
  {
    method: 'get',
    path: '/crms/:crmId/account/:reference',
    auth: 'crm',
    handle: async (ctx, req) => ok(wrap('account', toAccountView(await getAccount(ctx, req.params.reference!)))),
  },
  {
    method: 'post',
    path: '/crms/:crmId/provider',
    auth: 'crm',
    async handle(ctx, req) {
      const { provider, created } = await createProvider(ctx, req.body);
      return ok(wrap('provider', toProviderView(provider)), created ? 201 : 200);
    },
  },
  {
    method: 'get',
    path: '/crms/:crmId/provider/:reference',
    auth: 'crm',
    handle: async (ctx, req) => ok(wrap('provider', toProviderView(await getProvider(ctx, req.params.reference!)))),
  },
  {
    method: 'get',
    path: '/crms/:crmId/provider/:providerRef/staff',
    auth: 'crm',
    handle: async (ctx, req) => ok((await listStaff(ctx, req.params.providerRef!)).map(toUserView)),
  },
  // Extension (the spec shows no way to add staff): add or remove a user of the same CRM.
  {
    method: 'post',
    path: '/crms/:crmId/provider/:providerRef/staff',
    auth: 'crm',
    async handle(ctx, req) {
      const { user, created } = await addStaff(ctx, req.params.providerRef!, req.body);
      return ok(wrap('user', toUserView(user)), created ? 201 : 200);
    },
  },
  {
    method: 'delete',
    path: '/crms/:crmId/provider/:providerRef/staff/:userRef',
    auth: 'crm',
    async handle(ctx, req) {
      await removeStaff(ctx, req.params.providerRef!, req.params.userRef!);
      return noContent();
    },
  },
  // The link of the verification mail sent when a CRM links an existing consumer account (create user, rule 3).
  {
    method: 'get',
    path: '/verify-email',
    auth: 'public',
    async handle(ctx, req) {
      const verified = await verifyEmail(ctx, stringQuery(req.query, 'token') ?? '');
      const text = verified
        ? 'Ihre E-Mail-Adresse ist bestätigt. / Your e-mail address is confirmed.'
        : 'Dieser Link ist ungültig oder wurde schon benutzt. / This link is invalid or was already used.';
      return { status: verified ? 200 : 400, html: `<!doctype html><html><head><meta charset="utf-8"><title>E-Mail</title></head><body><p>${text}</p></body></html>` };
    },
  },
];
