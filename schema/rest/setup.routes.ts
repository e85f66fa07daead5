import { accountInput, createAccount, getAccount, toAccountView } from '../../services/accounts/account.service.js';
import { addStaff, createProvider, getProvider, listStaff, providerInput, removeStaff, staffInput, toProviderView } from '../../services/providers/provider.service.js';
import { escapeHtml } from '../../services/kernel/html.js';
import { createUser, getUser, isPendingVerification, userInput, verifyEmail } from '../../services/users/user.service.js';
import { toUserView } from '../../services/users/user.view.js';
import { noContent, ok, type Route, stringQuery, wrap } from './http.js';
import { textParam } from './openapi/query-params.js';
import { accountView, providerView, userView, wrapped } from './openapi/response-schemas.js';
import { z } from './openapi/zod-openapi.js';

const tag = 'Setup';

/** Spec section "Setup": users, accounts, providers, staff. */
export const setupRoutes: Route[] = [
  {
    method: 'post',
    path: '/crms/:crmId/user',
    auth: 'crm',
    doc: {
      tag,
      summary: 'Create or update a user',
      description: 'Rule 1: a known reference updates the fields sent. Rule 2: a taken e-mail of another user gets the first free `local+N@domain`. Rule 3: the e-mail of a consumer account links it (200) and sends a verification mail.',
      body: userInput,
      example: { reference: 'anna@crm', email: 'anna@example.com', username: 'anna', lastName: 'Agent', firstName: 'Anna' },
      responses: { 201: { description: 'created', json: wrapped('user', userView) }, 200: { description: 'updated or linked', json: wrapped('user', userView) } },
      errors: { 409: 'the same person under another reference, or the username is taken' },
    },
    async handle(ctx, req) {
      const { user, outcome } = await createUser(ctx, req.body);
      return ok(wrap('user', toUserView(user)), outcome === 'created' ? 201 : 200);
    },
  },
  {
    method: 'get',
    path: '/crms/:crmId/user/:reference',
    auth: 'crm',
    doc: { tag, summary: 'Get a user', responses: { 200: { description: 'the user', json: wrapped('user', userView) } } },
    handle: async (ctx, req) => ok(wrap('user', toUserView(await getUser(ctx, req.params.reference!)))),
  },
  {
    method: 'post',
    path: '/crms/:crmId/account',
    auth: 'crm',
    doc: {
      tag,
      summary: 'Create an account',
      description: 'A known reference answers 200 with the account unchanged.',
      body: accountInput,
      example: { ownerReference: 'anna@crm', accountReference: 'acc1@crm', branch: 'real-estate' },
      responses: { 201: { description: 'created', json: wrapped('account', accountView) }, 200: { description: 'already there', json: wrapped('account', accountView) } },
    },
    async handle(ctx, req) {
      const { account, created } = await createAccount(ctx, req.body);
      return ok(wrap('account', toAccountView(account)), created ? 201 : 200);
    },
  },
  {
    method: 'get',
    path: '/crms/:crmId/account/:reference',
    auth: 'crm',
    doc: { tag, summary: 'Get an account', responses: { 200: { description: 'the account', json: wrapped('account', accountView) } } },
    handle: async (ctx, req) => ok(wrap('account', toAccountView(await getAccount(ctx, req.params.reference!)))),
  },
  {
    method: 'post',
    path: '/crms/:crmId/provider',
    auth: 'crm',
    doc: {
      tag,
      summary: 'Create a provider',
      description: 'The owner becomes staff. A known reference answers 200 unchanged.',
      body: providerInput,
      example: { reference: 'prov1@crm', ownerReference: 'anna@crm', accountReference: 'acc1@crm', name: 'Anna Immobilien', email: 'office@example.com' },
      responses: { 201: { description: 'created', json: wrapped('provider', providerView) }, 200: { description: 'already there', json: wrapped('provider', providerView) } },
    },
    async handle(ctx, req) {
      const { provider, created } = await createProvider(ctx, req.body);
      return ok(wrap('provider', toProviderView(provider)), created ? 201 : 200);
    },
  },
  {
    method: 'get',
    path: '/crms/:crmId/provider/:reference',
    auth: 'crm',
    doc: { tag, summary: 'Get a provider', responses: { 200: { description: 'the provider', json: wrapped('provider', providerView) } } },
    handle: async (ctx, req) => ok(wrap('provider', toProviderView(await getProvider(ctx, req.params.reference!)))),
  },
  {
    method: 'get',
    path: '/crms/:crmId/provider/:providerRef/staff',
    auth: 'crm',
    doc: { tag, summary: 'List the staff of a provider', description: 'The owner first.', responses: { 200: { description: 'the staff', json: z.array(userView) } } },
    handle: async (ctx, req) => ok((await listStaff(ctx, req.params.providerRef!)).map(toUserView)),
  },
  // Extension (the spec shows no way to add staff): add or remove a user of the same CRM.
  {
    method: 'post',
    path: '/crms/:crmId/provider/:providerRef/staff',
    auth: 'crm',
    doc: {
      tag,
      summary: 'Add a staff member (extension)',
      body: staffInput,
      responses: { 201: { description: 'added', json: wrapped('user', userView) }, 200: { description: 'already staff', json: wrapped('user', userView) } },
    },
    async handle(ctx, req) {
      const { user, created } = await addStaff(ctx, req.params.providerRef!, req.body);
      return ok(wrap('user', toUserView(user)), created ? 201 : 200);
    },
  },
  {
    method: 'delete',
    path: '/crms/:crmId/provider/:providerRef/staff/:userRef',
    auth: 'crm',
    doc: { tag, summary: 'Remove a staff member (extension)', responses: { 204: { description: 'removed' } }, errors: { 409: 'the owner cannot be removed' } },
    async handle(ctx, req) {
      await removeStaff(ctx, req.params.providerRef!, req.params.userRef!);
      return noContent();
    },
  },
  // The link of the verification mail sent when a CRM links an existing consumer account (create user, rule 3).
  // GET only shows a button (mail scanners follow links); the POST it sends verifies.
  {
    method: 'get',
    path: '/verify-email',
    auth: 'public',
    doc: {
      tag,
      summary: 'Ask to confirm an e-mail address',
      description: 'The link of the verification mail sent when a CRM links an existing consumer account: a page with a button that POSTs (mail scanners follow GETs), changing nothing.',
      query: z.object({ token: textParam('the token of the mail') }),
      responses: { 200: { description: 'the confirmation page', html: true }, 400: { description: 'invalid or used link', html: true } },
    },
    async handle(ctx, req) {
      const token = stringQuery(req.query, 'token') ?? '';
      if (!(await isPendingVerification(ctx, token))) return verifyPage(400, INVALID_LINK);
      const action = `/verify-email?token=${encodeURIComponent(token)}`;
      return verifyPage(
        200,
        `<p>Bitte bestätigen Sie Ihre E-Mail-Adresse. / Please confirm your e-mail address.</p><form method="post" action="${escapeHtml(action)}"><button type="submit">Bestätigen / Confirm</button></form>`,
      );
    },
  },
  {
    method: 'post',
    path: '/verify-email',
    auth: 'public',
    doc: {
      tag,
      summary: 'Confirm an e-mail address',
      description: 'What the button of the confirmation page sends: verifies the address once.',
      query: z.object({ token: textParam('the token of the mail') }),
      responses: { 200: { description: 'confirmed', html: true }, 400: { description: 'invalid or used link', html: true } },
    },
    async handle(ctx, req) {
      const verified = await verifyEmail(ctx, stringQuery(req.query, 'token') ?? '');
      return verified ? verifyPage(200, '<p>Ihre E-Mail-Adresse ist bestätigt. / Your e-mail address is confirmed.</p>') : verifyPage(400, INVALID_LINK);
    },
  },
];

const INVALID_LINK = '<p>Dieser Link ist ungültig oder wurde schon benutzt. / This link is invalid or was already used.</p>';

const verifyPage = (status: number, body: string) => ({
  status,
  html: `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>E-Mail</title></head><body>${body}</body></html>`,
});
