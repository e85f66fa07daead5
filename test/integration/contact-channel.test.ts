import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContactProfile } from '../../services/contact-profiles/contact-profile.entity.js';
import { contactChannelOf } from '../../services/booking/bookables-query.js';
import { User } from '../../services/users/user.entity.js';
import { setupProvider, type ProviderFixture } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import type { ApiClient } from '../support/http.js';
import { unique } from '../support/http.js';
import { createStaffUser, enc } from '../support/offerings-fixtures.js';

type Channel = { type: string; value: string; label?: string };

describe('contactChannelOf (the contact channel a consumer sees)', () => {
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

  /** A staff user with the given general and provider profile channels (undefined: no such profile). */
  const contactWith = async (profiles: { general?: Channel[]; provider?: Channel[] }) => {
    const userRef = await createStaffUser(api, crmId, fixture.providerRef);
    if (profiles.general) {
      const res = await api.put(`/crms/${crmId}/user/${enc(userRef)}/generalContactProfile`, { name: 'General', contactChannels: profiles.general });
      expect(res.status).toBe(200);
    }
    let profileRef: string | null = null;
    if (profiles.provider) {
      profileRef = `profile-${unique()}`;
      const res = await api.post(`/crms/${crmId}/provider/${enc(fixture.providerRef)}/contactProfile`, {
        reference: profileRef,
        userReference: userRef,
        providerReference: fixture.providerRef,
        name: 'Provider',
        contactChannels: profiles.provider,
      });
      expect(res.status).toBe(201);
    }
    // A public context (no CRM), as the booking flow has.
    const ctx = app.context();
    const contact = (await ctx.em.findOneOrFail(User, { reference: userRef })).id;
    const contactProfile = profileRef ? (await ctx.em.findOneOrFail(ContactProfile, { reference: profileRef })).id : null;
    return { ctx, contact, contactProfile };
  };

  it('takes the first of mobile, phone, email of the assigned provider profile', async () => {
    const { ctx, contact, contactProfile } = await contactWith({
      general: [{ type: 'mobile', value: '+49 170 0000000' }],
      provider: [
        { type: 'email', value: 'desk@example.com' },
        { type: 'video', value: 'https://meet.example.com' },
        { type: 'phone', value: '+49 30 123' },
      ],
    });
    expect(await contactChannelOf(ctx, { contactProfileId: contactProfile, contactId: contact })).toEqual({ type: 'phone', value: '+49 30 123' });
  });

  it('prefers mobile over phone and email', async () => {
    const { ctx, contact, contactProfile } = await contactWith({
      provider: [
        { type: 'email', value: 'desk@example.com' },
        { type: 'mobile', value: '+49 171 5555555' },
        { type: 'phone', value: '+49 30 123' },
      ],
    });
    expect(await contactChannelOf(ctx, { contactProfileId: contactProfile, contactId: contact })).toEqual({ type: 'mobile', value: '+49 171 5555555' });
  });

  it("falls back to the contact's general profile without an assigned profile", async () => {
    const { ctx, contact } = await contactWith({ general: [{ type: 'email', value: 'sam@example.com' }, { type: 'link', value: 'https://x.example' }] });
    expect(await contactChannelOf(ctx, { contactProfileId: null, contactId: contact })).toEqual({ type: 'email', value: 'sam@example.com' });
  });

  it('falls back to the general profile when the assigned one has no customer-visible channel', async () => {
    const { ctx, contact, contactProfile } = await contactWith({
      general: [{ type: 'phone', value: '+49 30 777' }],
      provider: [{ type: 'video', value: 'https://meet.example.com' }],
    });
    expect(await contactChannelOf(ctx, { contactProfileId: contactProfile, contactId: contact })).toEqual({ type: 'phone', value: '+49 30 777' });
  });

  it('is null when no profile has a customer-visible channel, or there is no contact', async () => {
    const { ctx, contact, contactProfile } = await contactWith({
      general: [{ type: 'messenger', value: '@sam' }],
      provider: [{ type: 'location', value: 'Berlin' }],
    });
    expect(await contactChannelOf(ctx, { contactProfileId: contactProfile, contactId: contact })).toBeNull();
    const bare = await contactWith({});
    expect(await contactChannelOf(bare.ctx, { contactProfileId: null, contactId: bare.contact })).toBeNull();
    expect(await contactChannelOf(bare.ctx, { contactProfileId: null, contactId: null })).toBeNull();
  });
});
