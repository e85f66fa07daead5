import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmIntegration } from '../../services/crm/crm-integration.entity.js';
import { OutboxMessage } from '../../services/outbox/outbox-message.entity.js';
import { User } from '../../services/users/user.entity.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { type ApiClient, unique } from '../support/http.js';

const API_INFO = { version: '1' };

const USER_FIELDS = 'reference email username firstName lastName phone mobile';
const CREATE_USER = `mutation ($input: CreateUserInput!) { createUser(input: $input) { created outcome user { ${USER_FIELDS} } } }`;
const USER_QUERY = `query ($reference: String!) { user(reference: $reference) { ${USER_FIELDS} } }`;

/** A valid create-user body with fresh reference, e-mail and username. */
function newUserBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const id = unique('u');
  return { reference: `${id}@crm`, email: `${id}@example.com`, username: id, lastName: 'Muster', ...overrides };
}

/** The documented error body, with the message to expect. */
const errorBody = (message: unknown) => ({ 'api-info': API_INFO, errors: [{ errorCode: expect.any(String), message }] });

describe('Setup: create and get user (REST)', () => {
  let app: TestApp;
  let api: ApiClient;
  let crmId: string;
  let base: string;

  beforeAll(async () => {
    app = await startTestApp();
    ({ crmId, api } = await app.newCrm());
    base = `/crms/${crmId}/user`;
  });
  afterAll(async () => app?.close());

  it('rule 4: creates a new user with 201 and shows absent optional values as null', async () => {
    const body = newUserBody();
    const res = await api.post(base, body);
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.body).toEqual({
      'api-info': API_INFO,
      user: { reference: body.reference, email: body.email, username: body.username, firstName: null, lastName: 'Muster', phone: null, mobile: null },
    });
    expect(Object.keys(res.body.user)).toEqual(['reference', 'email', 'username', 'firstName', 'lastName', 'phone', 'mobile']);
  });

  it('rule 4: stores every optional field and answers it on GET', async () => {
    const body = newUserBody({ firstName: 'Erika', phone: '+49 30 123456', mobile: '+49 170 1234567' });
    expect((await api.post(base, body)).status).toBe(201);
    const res = await api.get(`${base}/${encodeURIComponent(body.reference as string)}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      'api-info': API_INFO,
      user: {
        reference: body.reference,
        email: body.email,
        username: body.username,
        firstName: 'Erika',
        lastName: 'Muster',
        phone: '+49 30 123456',
        mobile: '+49 170 1234567',
      },
    });
  });

  it('rule 4: takes the language from the CRM, overridable by a language cookie', async () => {
    const plain = newUserBody();
    await api.post(base, plain);
    const withCookie = newUserBody();
    await api.post(base, withCookie, { cookie: 'theme=dark; language=en' });
    const em = app.orm.em.fork();
    expect((await em.findOneOrFail(User, { reference: plain.reference as string, crm: crmId })).language).toBe('de');
    expect((await em.findOneOrFail(User, { reference: withCookie.reference as string, crm: crmId })).language).toBe('en');
  });

  it('rule 1: a known reference answers 200 and updates phone, mobile, lastName and firstName only', async () => {
    const body = newUserBody({ firstName: 'Old', phone: '+49 30 1111111', mobile: '+49 170 1111111' });
    await api.post(base, body);
    const res = await api.post(base, {
      ...body,
      email: `changed-${body.email}`,
      username: `changed-${body.username}`,
      lastName: 'Neu',
      firstName: 'New',
      phone: '+49 30 2222222',
      mobile: '+49 170 2222222',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      'api-info': API_INFO,
      user: {
        reference: body.reference,
        email: body.email,
        username: body.username,
        firstName: 'New',
        lastName: 'Neu',
        phone: '+49 30 2222222',
        mobile: '+49 170 2222222',
      },
    });
    const again = await api.get(`${base}/${encodeURIComponent(body.reference as string)}`);
    expect(again.body.user).toEqual(res.body.user);
  });

  it('rule 1: explicit null clears an optional field, an absent one keeps it', async () => {
    const body = newUserBody({ firstName: 'Keep', phone: '+49 30 3333333', mobile: '+49 170 3333333' });
    await api.post(base, body);
    const { firstName: _omitted, ...withoutFirstName } = body;
    const res = await api.post(base, { ...withoutFirstName, phone: null });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ firstName: 'Keep', phone: null, mobile: '+49 170 3333333' });
  });

  it('rule 2: the e-mail of a user with another reference gives a new user with a generated variant (201)', async () => {
    const first = newUserBody({ email: `${unique('dup')}@Example.COM` });
    const firstRes = await api.post(base, first);
    expect(firstRes.status).toBe(201);
    const email = firstRes.body.user.email as string;
    expect(email).toBe((first.email as string).toLowerCase());
    const [local, domain] = email.split('@');

    const second = newUserBody({ email });
    const secondRes = await api.post(base, second);
    expect(secondRes.status).toBe(201);
    expect(secondRes.body.user).toMatchObject({ reference: second.reference, username: second.username, email: `${local}+1@${domain}` });

    const third = await api.post(base, newUserBody({ email }));
    expect(third.status).toBe(201);
    expect(third.body.user.email).toBe(`${local}+2@${domain}`);

    // The first user keeps its e-mail.
    expect((await api.get(`${base}/${encodeURIComponent(first.reference as string)}`)).body.user.email).toBe(email);
  });

  it('rule 3: the e-mail of a user without reference links that user, takes the CRM’s values and restarts its e-mail verification', async () => {
    const ctx = app.context();
    const crm = await ctx.em.findOneOrFail(CrmIntegration, { id: crmId });
    const email = `${unique('consumer')}@example.com`;
    // A consumer as the booking flow creates it: no reference, no username, e-mail already verified.
    const consumer = ctx.em.create(User, {
      crm,
      email,
      lastName: 'Consumer',
      mobile: '+49 170 5555555',
      emailVerified: true,
      createdAt: new Date(),
    });
    await ctx.em.flush();

    const body = newUserBody({ email, lastName: 'Staff', firstName: 'Linda' });
    const res = await api.post(base, body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      'api-info': API_INFO,
      user: { reference: body.reference, email, username: body.username, firstName: 'Linda', lastName: 'Staff', phone: null, mobile: '+49 170 5555555' },
    });

    const em = app.orm.em.fork();
    const linked = await em.findOneOrFail(User, { id: consumer.id });
    expect(linked.reference).toBe(body.reference);
    expect(linked.emailVerified).toBe(false);
    expect(linked.emailVerificationToken).toEqual(expect.any(String));
    expect(await em.count(User, { crm: crmId, email })).toBe(1);

    const mails = (await em.find(OutboxMessage, { kind: 'mail' })).filter(
      (row) => (row.payload as { params?: { userId?: string } }).params?.userId === consumer.id,
    );
    expect(mails).toHaveLength(1);
    expect(mails[0]!.payload).toMatchObject({ template: 'user-verification', params: { userId: consumer.id } });

    // Afterwards the reference is known: rule 1 applies, no second verification mail.
    expect((await api.post(base, body)).status).toBe(200);
    const after = (await app.orm.em.fork().find(OutboxMessage, { kind: 'mail' })).filter(
      (row) => (row.payload as { params?: { userId?: string } }).params?.userId === consumer.id,
    );
    expect(after).toHaveLength(1);
  });

  it('409 "User with given email already exists." when e-mail and username belong to a user with another reference', async () => {
    const body = newUserBody();
    await api.post(base, body);
    const res = await api.post(base, { ...body, reference: `${unique('other')}@crm` });
    expect(res.status).toBe(409);
    expect(res.body).toEqual(errorBody('User with given email already exists.'));
  });

  it('409 "User with given username already exists." when the username belongs to another user', async () => {
    const body = newUserBody();
    await api.post(base, body);
    const fresh = await api.post(base, newUserBody({ username: body.username }));
    expect(fresh.status).toBe(409);
    expect(fresh.body).toEqual(errorBody('User with given username already exists.'));

    // Also when the e-mail belongs to yet another user: the username decides.
    const other = newUserBody();
    await api.post(base, other);
    const mixed = await api.post(base, newUserBody({ username: body.username, email: other.email }));
    expect(mixed.status).toBe(409);
    expect(mixed.body).toEqual(errorBody('User with given username already exists.'));
  });

  it.each(['/', '?', ':', '&', '#', '\\'])('400 for the forbidden username character %s', async (character) => {
    const res = await api.post(base, newUserBody({ username: `bad${character}name` }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorBody(expect.stringContaining('username')));
  });

  it('accepts usernames with other special characters (. - _ @ + space)', async () => {
    const res = await api.post(base, newUserBody({ username: `${unique('ok')}.a-b_c@d+e f` }));
    expect(res.status).toBe(201);
  });

  describe.each(['reference', 'email', 'username', 'lastName'])('required field %s', (field) => {
    it.each([
      ['missing', undefined],
      ['null', null],
      ['empty', ''],
      ['blank', '   '],
    ])('400 naming the field when %s', async (_case, value) => {
      const body = newUserBody();
      if (value === undefined) delete body[field];
      else body[field] = value;
      const res = await api.post(base, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody(expect.stringContaining(field)));
    });
  });

  it('400 for an invalid e-mail address and for wrong types, naming the field', async () => {
    const invalid = await api.post(base, newUserBody({ email: 'not-an-address' }));
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors![0].message).toContain('email');

    const numeric = await api.post(base, newUserBody({ email: 42 }));
    expect(numeric.status).toBe(400);
    expect(numeric.body).toEqual(errorBody('email must be a string, got number'));

    const nested = await api.post(base, newUserBody({ lastName: { a: 1 } }));
    expect(nested.status).toBe(400);
    expect(nested.body.errors![0].message).toContain('lastName');

    const array = await api.post(base, [newUserBody()]);
    expect(array.status).toBe(400);
    expect(array.body).toEqual(errorBody(expect.stringContaining('body')));
  });

  it('GET answers 404 with the error body for an unknown reference', async () => {
    const res = await api.get(`${base}/${encodeURIComponent('nobody@crm')}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual(errorBody(expect.any(String)));
  });

  it.each([
    'plain@platform',
    'with space@my platform',
    'slash/and?query=1&x#frag@crm',
    'percent%20sign+plus@crm',
    'umlaut-äöü€@crm.example',
    'colon:semi;comma,@crm',
  ])('GET finds the URL-encoded reference %s', async (reference) => {
    const body = newUserBody({ reference: `${unique('r')}-${reference}` });
    expect((await api.post(base, body)).status).toBe(201);
    const res = await api.get(`${base}/${encodeURIComponent(body.reference as string)}`);
    expect(res.status).toBe(200);
    expect(res.body.user.reference).toBe(body.reference);
  });
});

describe('Setup: createUser and user (GraphQL)', () => {
  let app: TestApp;
  let api: ApiClient;
  let crmId: string;

  beforeAll(async () => {
    app = await startTestApp();
    ({ crmId, api } = await app.newCrm());
  });
  afterAll(async () => app?.close());

  const create = (input: Record<string, unknown>) => api.graphql(CREATE_USER, { input });

  it('creates a user (outcome created) and reads it back, nulls for absent values', async () => {
    const input = newUserBody();
    const res = await create(input);
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.createUser).toEqual({
      created: true,
      outcome: 'CREATED',
      user: { reference: input.reference, email: input.email, username: input.username, firstName: null, lastName: 'Muster', phone: null, mobile: null },
    });
    const read = await api.graphql(USER_QUERY, { reference: input.reference });
    expect(read.body.data.user).toEqual(res.body.data.createUser.user);
  });

  it('rule 1: a known reference is updated (outcome updated)', async () => {
    const input = newUserBody({ firstName: 'A' });
    await create(input);
    const res = await create({ ...input, firstName: 'B', lastName: 'C', phone: '+41 44 1234567', mobile: '+41 79 1234567' });
    expect(res.body.data.createUser).toMatchObject({
      created: false,
      outcome: 'UPDATED',
      user: { firstName: 'B', lastName: 'C', phone: '+41 44 1234567', mobile: '+41 79 1234567' },
    });
  });

  it('rule 2: a generated e-mail variant for an e-mail under another reference', async () => {
    const first = newUserBody();
    await create(first);
    const res = await create(newUserBody({ email: first.email }));
    const [local, domain] = (first.email as string).split('@');
    expect(res.body.data.createUser).toMatchObject({ created: true, outcome: 'CREATED', user: { email: `${local}+1@${domain}` } });
  });

  it('rule 3: links a user without reference (outcome linked) and queues a verification mail', async () => {
    const ctx = app.context();
    const crm = await ctx.em.findOneOrFail(CrmIntegration, { id: crmId });
    const email = `${unique('consumer')}@example.com`;
    const consumer = ctx.em.create(User, { crm, email, lastName: 'Consumer', firstName: 'Conny', mobile: '+491701234567', emailVerified: true, createdAt: new Date() });
    await ctx.em.flush();
    const input = newUserBody({ email, firstName: 'Stella', mobile: '+49 171 7654321' });
    const res = await create(input);
    expect(res.body.data.createUser).toMatchObject({
      created: false,
      outcome: 'LINKED',
      user: { reference: input.reference, email, firstName: 'Stella', lastName: 'Muster', mobile: '+49 171 7654321' },
    });
    const em = app.orm.em.fork();
    expect((await em.findOneOrFail(User, { id: consumer.id })).emailVerified).toBe(false);
    const mails = (await em.find(OutboxMessage, { kind: 'mail' })).filter(
      (row) => (row.payload as { params?: { userId?: string } }).params?.userId === consumer.id,
    );
    expect(mails).toHaveLength(1);
  });

  it('the two 409 messages with extensions.code EMAIL_IN_USE and USERNAME_IN_USE', async () => {
    const input = newUserBody();
    await create(input);
    const email = await create({ ...input, reference: `${unique('x')}@crm` });
    expect(email.body.errors![0]).toMatchObject({ message: 'User with given email already exists.', extensions: { code: 'EMAIL_IN_USE' } });
    const username = await create(newUserBody({ username: input.username }));
    expect(username.body.errors![0]).toMatchObject({ message: 'User with given username already exists.', extensions: { code: 'USERNAME_IN_USE' } });
  });

  it('VALIDATION_FAILED naming the field for empty values and forbidden username characters', async () => {
    const empty = await create(newUserBody({ lastName: '' }));
    expect(empty.body.errors![0].extensions.code).toBe('VALIDATION_FAILED');
    expect(empty.body.errors![0].message).toContain('lastName');
    const bad = await create(newUserBody({ username: 'a#b' }));
    expect(bad.body.errors![0].extensions.code).toBe('VALIDATION_FAILED');
    expect(bad.body.errors![0].message).toContain('username');
  });

  it('a missing required input field is rejected by GraphQL itself, never a 500', async () => {
    const { email: _omitted, ...input } = newUserBody();
    const res = await create(input);
    expect(res.status).toBeLessThan(500);
    expect(res.body.errors![0].extensions.code).toMatch(/BAD_USER_INPUT|GRAPHQL_VALIDATION_FAILED/);
    expect(res.body.errors![0].message).toContain('email');
  });

  it('user answers null for an unknown reference (and for a user of another CRM)', async () => {
    const res = await api.graphql(USER_QUERY, { reference: 'nobody@crm' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { user: null } });
    const input = newUserBody();
    await create(input);
    const other = (await app.newCrm()).api;
    expect((await other.graphql(USER_QUERY, { reference: input.reference })).body).toEqual({ data: { user: null } });
    expect((await app.anonymous.graphql(USER_QUERY, { reference: input.reference })).body.errors![0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('language is the enum DE or EN (stored as de/en); another value is refused with 400 and nothing is created', async () => {
    const input = newUserBody({ language: 'EN' });
    expect((await create(input)).body.data.createUser.outcome).toBe('CREATED');
    const em = app.orm.em.fork();
    expect((await em.findOneOrFail(User, { reference: input.reference as string, crm: crmId })).language).toBe('en');
    const bad = newUserBody({ language: 'fr' });
    const res = await create(bad);
    expect(res.status).toBe(400);
    expect(res.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
    expect(res.body.errors![0].message).toContain('Language');
    expect(await em.findOne(User, { reference: bad.reference as string, crm: crmId })).toBeNull();
  });
});
