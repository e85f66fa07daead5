import type { ApiClient } from './http.js';
import { unique } from './http.js';

export interface ProviderFixture {
  ownerRef: string;
  accountRef: string;
  providerRef: string;
  providerUuid: string;
  email: string;
}

/** Creates an owner, an account and a provider for a CRM through the REST facade. */
export async function setupProvider(api: ApiClient, crmId: string, overrides: { timeZone?: string } = {}): Promise<ProviderFixture> {
  const id = unique();
  const ownerRef = `owner-${id}@test`;
  const email = `owner-${id}@example.com`;
  const user = await api.post(`/crms/${crmId}/user`, { reference: ownerRef, email, username: `owner-${id}`, lastName: 'Owner', firstName: 'Olga' });
  if (user.status !== 201) throw new Error(`user fixture failed: ${user.status} ${user.text}`);
  const accountRef = `account-${id}@test`;
  const account = await api.post(`/crms/${crmId}/account`, { ownerReference: ownerRef, accountReference: accountRef, branch: 'real-estate' });
  if (account.status !== 201) throw new Error(`account fixture failed: ${account.status} ${account.text}`);
  const providerRef = `provider-${id}@test`;
  const provider = await api.post(`/crms/${crmId}/provider`, {
    reference: providerRef,
    ownerReference: ownerRef,
    accountReference: accountRef,
    name: `Provider ${id}`,
    ...overrides,
  });
  if (provider.status !== 201) throw new Error(`provider fixture failed: ${provider.status} ${provider.text}`);
  return { ownerRef, accountRef, providerRef, providerUuid: provider.body.provider.uuid, email };
}
