import type { TestApp } from './harness.js';
import type { ApiClient } from './http.js';
import { setupProvider, type ProviderFixture } from './fixtures.js';
import { createProduct, createResource, enc } from './offerings-fixtures.js';

export interface BookingFixture extends ProviderFixture {
  crmId: string;
  api: ApiClient;
  resourceRef: string;
  resourceUuid: string;
  productRef: string;
  productUuid: string;
  timeslotUuid: string;
  /** The first slot of the timeslot (ISO instants). */
  slot: { from: string; to: string };
}

/**
 * A provider with one product, one resource and one BOOKABLE timeslot of
 * `slots` slots of `raster` minutes starting `startInDays` days from the
 * test clock (at 09:00 in the provider's zone, Berlin unless told).
 */
export async function setupBookable(
  app: TestApp,
  options: { capacity?: number; raster?: number; slots?: number; startInDays?: number; acceptBookings?: boolean; product?: Record<string, unknown>; timeZone?: string } = {},
): Promise<BookingFixture> {
  const { crmId, api } = await app.newCrm();
  const provider = await setupProvider(api, crmId, options.timeZone ? { timeZone: options.timeZone } : {});
  const productRef = await createProduct(api, crmId, provider.providerRef, options.product ?? {});
  const resourceRef = await createResource(api, crmId, provider.providerRef, { products: [productRef] });
  const raster = options.raster ?? 30;
  const day = new Date(app.clock.now().getTime() + (options.startInDays ?? 7) * 86_400_000);
  const date = day.toISOString().slice(0, 10);
  const startLocal = `${date}T09:00`;
  const endMinutes = 9 * 60 + raster * (options.slots ?? 4);
  const endLocal = `${date}T${String(Math.floor(endMinutes / 60)).padStart(2, '0')}:${String(endMinutes % 60).padStart(2, '0')}`;
  const P = `/crms/${crmId}/provider/${enc(provider.providerRef)}`;
  const created = await api.post(`${P}/timeslots`, {
    timeslots: [
      {
        resourceReference: resourceRef,
        start: startLocal,
        end: endLocal,
        raster,
        defaultCapacity: options.capacity ?? 3,
        defaultAcceptBookings: options.acceptBookings ?? true,
        state: 'BOOKABLE',
      },
    ],
  });
  if (created.status !== 201) throw new Error(`timeslot fixture failed: ${created.status} ${created.text}`);
  const timeslot = created.body.timeslots[0];
  const products = await api.get(`${P}/products`);
  const resources = await api.get(`${P}/resources`);
  const from = new Date(timeslot.start);
  return {
    ...provider,
    crmId,
    api,
    resourceRef,
    resourceUuid: resources.body.find((r: { reference: string }) => r.reference === resourceRef).uuid,
    productRef,
    productUuid: products.body.find((p: { reference: string }) => p.reference === productRef).uuid,
    timeslotUuid: timeslot.uuid,
    slot: { from: from.toISOString(), to: new Date(from.getTime() + raster * 60_000).toISOString() },
  };
}
