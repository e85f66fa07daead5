import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContactChannel } from '../../services/contact-profiles/contact-channel.entity.js';
import { ContactProfile } from '../../services/contact-profiles/contact-profile.entity.js';
import { setupProvider, type ProviderFixture } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import type { ApiClient } from '../support/http.js';
import { unique } from '../support/http.js';
import { createUser, enc } from '../support/offerings-fixtures.js';

describe('offerings: contact profiles (REST)', () => {
  let app: TestApp;
  let api: ApiClient;
  let crmId: string;
  let fixture: ProviderFixture;

  beforeAll(async () => {
    app = await startTestApp();
    ({ crmId, api } = await app.newCrm());
    fixture = await setupProvider(api, crmId);
  });
  afterAll(async () => app?.close());

  const generalPath = (userRef: string) => `/crms/${crmId}/user/${enc(userRef)}/generalContactProfile`;
  const profilesPath = () => `/crms/${crmId}/provider/${enc(fixture.providerRef)}/contactProfile`;
  const profileBody = (overrides: Record<string, unknown> = {}) => ({
    reference: `profile-${unique()}@test`,
    userReference: fixture.ownerRef,
    providerReference: fixture.providerRef,
    name: 'Olga at the office',
    contactChannels: [{ type: 'email', value: 'olga@example.com' }],
    ...overrides,
  });

  describe('general profile', () => {
    it('answers 404 for a user without a profile and for an unknown user', async () => {
      const userRef = await createUser(api, crmId);
      const none = await api.get(generalPath(userRef));
      expect(none.status).toBe(404);
      expect(none.body.errors[0].errorCode).toBe('NOT_FOUND');
      expect((await api.get(generalPath('ghost@test'))).status).toBe(404);
      expect((await api.put(generalPath('ghost@test'), { name: 'x', contactChannels: [] })).status).toBe(404);
    });

    it('creates the profile with PUT (200) and returns it; GET shows the same', async () => {
      const userRef = await createUser(api, crmId);
      const res = await api.put(generalPath(userRef), {
        name: 'Sam Staff',
        contactChannels: [
          { type: 'email', value: 'Sam@Example.com', label: 'Office' },
          { type: 'mobile', value: '+49 170 1234567' },
          { type: 'video', value: 'https://meet.example.com/sam' },
        ],
      });
      expect(res.status).toBe(200);
      const expected = {
        name: 'Sam Staff',
        contactChannels: [
          { label: null, type: 'mobile', value: '+49 170 1234567' },
          { label: 'Office', type: 'email', value: 'Sam@Example.com' },
          { label: null, type: 'video', value: 'https://meet.example.com/sam' },
        ],
      };
      expect(res.body).toEqual(expected);
      const get = await api.get(generalPath(userRef));
      expect(get.status).toBe(200);
      expect(get.body).toEqual(expected);
    });

    it('updates present types in place, creates new types and removes absent ones', async () => {
      const userRef = await createUser(api, crmId);
      await api.put(generalPath(userRef), {
        name: 'Before',
        contactChannels: [
          { type: 'phone', value: '+49 30 1111' },
          { type: 'email', value: 'before@example.com' },
        ],
      });
      const em = app.context().em;
      const profile = await em.findOneOrFail(ContactProfile, { user: { reference: userRef }, provider: null });
      const phoneBefore = await em.findOneOrFail(ContactChannel, { profile, type: 'phone' });

      const res = await api.put(generalPath(userRef), {
        name: 'After',
        contactChannels: [
          { type: 'phone', value: '+49 30 2222', label: 'Desk' },
          { type: 'link', value: 'https://example.com' },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        name: 'After',
        contactChannels: [
          { label: 'Desk', type: 'phone', value: '+49 30 2222' },
          { label: null, type: 'link', value: 'https://example.com' },
        ],
      });
      const channels = await app.context().em.find(ContactChannel, { profile: profile.id });
      expect(channels.map((c) => c.type).sort()).toEqual(['link', 'phone']);
      expect(channels.find((c) => c.type === 'phone')!.id).toBe(phoneBefore.id);

      const emptied = await api.put(generalPath(userRef), { name: 'Quiet', contactChannels: [] });
      expect(emptied.body).toEqual({ name: 'Quiet', contactChannels: [] });
    });

    it.each([
      [{ contactChannels: [] }, 'name is required'],
      [{ name: '', contactChannels: [] }, 'name must not be empty'],
      [{ name: 'x' }, 'contactChannels is required'],
      [{ name: 'x', contactChannels: 'email' }, 'contactChannels must be an array'],
      [{ name: 'x', contactChannels: [{ type: 'fax', value: '123' }] }, 'contactChannels[0].type must be one of mobile, phone, email, video, messenger, link, location'],
      [{ name: 'x', contactChannels: [{ value: '123' }] }, 'contactChannels[0].type is required'],
      [{ name: 'x', contactChannels: [{ type: 'link' }] }, 'contactChannels[0].value is required'],
      [
        { name: 'x', contactChannels: [{ type: 'email', value: 'a@example.com' }, { type: 'email', value: 'b@example.com' }] },
        'contactChannels[1].type email occurs more than once',
      ],
      [{ name: 'x', contactChannels: [{ type: 'email', value: 'not-an-address' }] }, 'contactChannels[0].value must be a valid e-mail address'],
      [{ name: 'x', contactChannels: [{ type: 'mobile', value: 'call me' }] }, 'contactChannels[0].value must be a phone number'],
    ])('rejects %j with 400 and keeps the stored profile', async (body, message) => {
      const userRef = await createUser(api, crmId);
      await api.put(generalPath(userRef), { name: 'Kept', contactChannels: [{ type: 'phone', value: '+49 30 1' }] });
      const res = await api.put(generalPath(userRef), body);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toContain(message);
      expect((await api.get(generalPath(userRef))).body.name).toBe('Kept');
    });
  });

  describe('provider profile', () => {
    it('creates with 201 and the wrapped shape, updates with 200, reads back with GET', async () => {
      const body = profileBody({
        contactChannels: [
          { type: 'email', value: 'olga@example.com' },
          { type: 'location', value: 'Invalidenstraße 1, Berlin', label: 'Office' },
        ],
      });
      const created = await api.post(profilesPath(), body);
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        'api-info': { version: '1' },
        contactProfile: {
          reference: body.reference,
          userReference: fixture.ownerRef,
          providerReference: fixture.providerRef,
          name: 'Olga at the office',
          contactChannels: [
            { label: null, type: 'email', value: 'olga@example.com' },
            { label: 'Office', type: 'location', value: 'Invalidenstraße 1, Berlin' },
          ],
        },
      });

      const updated = await api.post(profilesPath(), { ...body, name: 'Olga', contactChannels: [{ type: 'phone', value: '+49 30 999' }] });
      expect(updated.status).toBe(200);
      expect(updated.body.contactProfile).toEqual({
        reference: body.reference,
        userReference: fixture.ownerRef,
        providerReference: fixture.providerRef,
        name: 'Olga',
        contactChannels: [{ label: null, type: 'phone', value: '+49 30 999' }],
      });

      const get = await api.get(`${profilesPath()}/${enc(body.reference)}`);
      expect(get.status).toBe(200);
      expect(get.body).toEqual(updated.body);
    });

    it('answers 404 for an unknown profile, provider or user', async () => {
      const unknown = await api.get(`${profilesPath()}/ghost-profile`);
      expect(unknown.status).toBe(404);
      expect(unknown.body.errors[0].message).toBe('Contact profile not found: ghost-profile');
      expect((await api.post(`/crms/${crmId}/provider/nope/contactProfile`, profileBody({ providerReference: 'nope' }))).status).toBe(404);
      const noUser = await api.post(profilesPath(), profileBody({ userReference: 'ghost@test' }));
      expect(noUser.status).toBe(404);
      expect(noUser.body.errors[0]).toEqual({ errorCode: 'USER_NOT_FOUND', message: 'no user found for userReference ghost@test' });
    });

    it('requires providerReference to be the provider of the path (400)', async () => {
      const other = await setupProvider(api, crmId);
      const res = await api.post(profilesPath(), profileBody({ providerReference: other.providerRef }));
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toContain('must be the provider of the path');
    });

    it.each(['reference', 'userReference', 'providerReference', 'name', 'contactChannels'])('requires %s (400)', async (field) => {
      const body: Record<string, unknown> = profileBody();
      delete body[field];
      const res = await api.post(profilesPath(), body);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toBe(`${field} is required`);
    });

    it('applies the channel rules of the general profile', async () => {
      const duplicate = await api.post(profilesPath(), profileBody({ contactChannels: [{ type: 'link', value: 'a' }, { type: 'link', value: 'b' }] }));
      expect(duplicate.status).toBe(400);
      const badType = await api.post(profilesPath(), profileBody({ contactChannels: [{ type: 'telegram', value: 'x' }] }));
      expect(badType.status).toBe(400);
    });

    it('refuses (409) a reference held by another provider or another user', async () => {
      const body = profileBody();
      expect((await api.post(profilesPath(), body)).status).toBe(201);
      const other = await setupProvider(api, crmId);
      const otherProvider = await api.post(`/crms/${crmId}/provider/${enc(other.providerRef)}/contactProfile`, { ...body, providerReference: other.providerRef });
      expect(otherProvider.status).toBe(409);
      const otherUser = await createUser(api, crmId);
      const res = await api.post(profilesPath(), { ...body, userReference: otherUser });
      expect(res.status).toBe(409);
      expect(res.body.errors[0].message).toContain('belongs to another user');
      // The profile of another provider is not visible through this provider's path.
      expect((await api.get(`/crms/${crmId}/provider/${enc(other.providerRef)}/contactProfile/${enc(body.reference)}`)).status).toBe(404);
    });
  });

  it("gives a second CRM 404 for the first CRM's profiles", async () => {
    const body = profileBody();
    expect((await api.post(profilesPath(), body)).status).toBe(201);
    await api.put(generalPath(fixture.ownerRef), { name: 'Olga', contactChannels: [] });

    const { crmId: otherCrm, api: other } = await app.newCrm();
    expect((await other.get(`/crms/${otherCrm}/user/${enc(fixture.ownerRef)}/generalContactProfile`)).status).toBe(404);
    expect((await other.put(`/crms/${otherCrm}/user/${enc(fixture.ownerRef)}/generalContactProfile`, { name: 'x', contactChannels: [] })).status).toBe(404);
    expect((await other.get(`/crms/${otherCrm}/provider/${enc(fixture.providerRef)}/contactProfile/${enc(body.reference)}`)).status).toBe(404);
    expect((await other.post(`/crms/${otherCrm}/provider/${enc(fixture.providerRef)}/contactProfile`, body)).status).toBe(404);

    const own = await setupProvider(other, otherCrm);
    const ownPath = `/crms/${otherCrm}/provider/${enc(own.providerRef)}/contactProfile`;
    expect((await other.get(`${ownPath}/${enc(body.reference)}`)).status).toBe(404);
    // The first CRM's user is unknown to the second CRM.
    const foreignUser = await other.post(ownPath, { ...body, providerReference: own.providerRef });
    expect(foreignUser.status).toBe(404);
    expect(foreignUser.body.errors[0].errorCode).toBe('USER_NOT_FOUND');
  });
});
