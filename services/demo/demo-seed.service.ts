import { createAccount } from '../accounts/account.service.js';
import { CrmIntegration } from '../crm/crm-integration.entity.js';
import { createCrm, rotateCrmKey } from '../crm/crm.service.js';
import { type ContextRoot, createContext } from '../kernel/context.js';
import { saveProduct } from '../products/product.service.js';
import { createProvider } from '../providers/provider.service.js';
import { saveResource } from '../resources/resource.service.js';
import { Timeslot } from '../timeslots/timeslot.entity.js';
import { createTimeslots } from '../timeslots/timeslot.service.js';
import { createUser } from '../users/user.service.js';

export const DEMO_CRM_ID = 'demo';
export const DEMO_PROVIDER_REFERENCE = 'demo-provider@demo';
export const DEMO_DAYS = 7;

const TIME_ZONE = 'Europe/Berlin';

/** The demo's resources and the daily timeslots each gets. */
const RESOURCES = [
  {
    reference: 'demo-flat@demo',
    publicName: 'Wohnung Musterstraße 1',
    internalName: 'Demo flat',
    products: ['demo-viewing@demo'],
    address: { city: 'Berlin', zip: '10115', street: 'Musterstraße', number: '1' },
    timeslots: [{ key: 'am', from: '09:00', to: '12:00', raster: 30, capacity: 1 }],
  },
  {
    reference: 'demo-court@demo',
    publicName: 'Tennis court 1',
    internalName: 'Demo court',
    products: ['demo-court-hour@demo', 'demo-group-training@demo'],
    address: { city: 'Berlin', zip: '10117', street: 'Sportplatzweg', number: '7' },
    timeslots: [
      { key: 'pm', from: '14:00', to: '18:00', raster: 60, capacity: 1 },
      // The group slot: one 90-minute training a day with eight places.
      { key: 'group', from: '18:00', to: '19:30', raster: 90, capacity: 8 },
    ],
  },
] as const;

const PRODUCTS = [
  { reference: 'demo-viewing@demo', name: 'Besichtigung', minDuration: 30, maxDuration: 30 },
  { reference: 'demo-court-hour@demo', name: 'Court hour', minDuration: 60, maxDuration: 60 },
  { reference: 'demo-group-training@demo', name: 'Group training', minDuration: 90, maxDuration: 90 },
];

export interface DemoSeedResult {
  crmId: string;
  /** A key of the demo CRM: new on the first run, rotated on every later one (keys are stored hashed). */
  key: string;
  crmCreated: boolean;
  providerReference: string;
  resources: { reference: string; uuid: string; publicName: string }[];
  timeslotsCreated: number;
}

/**
 * Creates (or brings up to date) a demo CRM with a provider, products, two
 * resources and BOOKABLE timeslots for the next DEMO_DAYS days, through the
 * same services as the API. Running it again creates nothing twice: the
 * records are found by reference, a day's timeslots by their reference
 * (`demo-<resource>-<date>-<key>`), and only the days not yet covered are added.
 */
export async function seedDemoData(root: ContextRoot, crmId = DEMO_CRM_ID): Promise<DemoSeedResult> {
  const em = root.em.fork();
  const existing = await em.findOne(CrmIntegration, { id: crmId });
  const key = existing ? await rotateCrmKey(em, crmId) : (await createCrm(em, crmId, 'de')).key;
  const crm = await em.findOneOrFail(CrmIntegration, { id: crmId });
  const ctx = () => createContext(root, { crm });

  await createUser(ctx(), { reference: 'demo-owner@demo', email: `owner@${crmId}.booking.localhost`, username: `${crmId}-owner`, firstName: 'Dana', lastName: 'Demo' });
  await createAccount(ctx(), { ownerReference: 'demo-owner@demo', accountReference: 'demo-account@demo', branch: 'sports-and-leisure' });
  await createProvider(ctx(), {
    reference: DEMO_PROVIDER_REFERENCE,
    ownerReference: 'demo-owner@demo',
    accountReference: 'demo-account@demo',
    name: 'Demo Provider',
    email: `office@${crmId}.booking.localhost`,
    timeZone: TIME_ZONE,
  });
  for (const product of PRODUCTS) await saveProduct(ctx(), DEMO_PROVIDER_REFERENCE, product);

  const resources: DemoSeedResult['resources'] = [];
  let timeslotsCreated = 0;
  const days = nextDays(root.clock.now(), DEMO_DAYS);
  for (const { timeslots, ...fields } of RESOURCES) {
    const { resource } = await saveResource(ctx(), DEMO_PROVIDER_REFERENCE, fields, { onDuplicateRaise: false });
    resources.push({ reference: resource.reference, uuid: resource.id, publicName: resource.publicName });
    const wanted = days.flatMap((day) =>
      timeslots.map((slot) => ({
        reference: `demo-${fields.reference.split('@')[0]}-${day}-${slot.key}`,
        resourceReference: fields.reference,
        start: `${day}T${slot.from}`,
        end: `${day}T${slot.to}`,
        raster: slot.raster,
        defaultCapacity: slot.capacity,
        defaultAcceptBookings: true,
        state: 'BOOKABLE' as const,
      })),
    );
    const have = await em.find(Timeslot, { crm, reference: { $in: wanted.map((t) => t.reference) } }, { fields: ['reference'] });
    const known = new Set(have.map((t) => t.reference));
    const missing = wanted.filter((t) => !known.has(t.reference));
    if (missing.length) timeslotsCreated += (await createTimeslots(ctx(), DEMO_PROVIDER_REFERENCE, { timeslots: missing })).length;
  }
  return { crmId, key, crmCreated: !existing, providerReference: DEMO_PROVIDER_REFERENCE, resources, timeslotsCreated };
}

/** The dates (`YYYY-MM-DD`, provider's zone) of the `count` days after today. */
function nextDays(now: Date, count: number): string[] {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: TIME_ZONE, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
  const midnight = Date.parse(`${today}T00:00:00Z`);
  return Array.from({ length: count }, (_, i) => new Date(midnight + (i + 1) * 86_400_000).toISOString().slice(0, 10));
}
