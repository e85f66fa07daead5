import type pg from 'pg';
import { bookDirectly, nextConsumerEmail } from './lib/booking.js';
import { addDays, gridOf, PROVIDER_ZONE, type Slot, todayIn } from './lib/calendar.js';
import { type Api, describeFailure } from './lib/http.js';
import { log } from './lib/log.js';
import { pool, tally } from './lib/stats.js';
import { cloneBookings, clonePastTimeslots, findBookingTemplate } from './seed-sql.js';

/**
 * Seeds the bench CRM through the public REST API, as a CRM and consumers
 * would: a user, account, provider, products, resources, timeslots, and half
 * of P3's slots booked through create_appointment_with_consumer. What the
 * API cannot do (bookings in the past), or cannot do in time today, is
 * written with SQL as copies of rows the API made (seed-sql.ts).
 */

export const DAYS = 30;
const PROVIDER = 'prov@bench';
const SMALL_PROVIDER = 'small@bench';

export interface SeededResource {
  ref: string;
  id: string;
  productId: string;
  slots: Slot[];
}

export interface Seed {
  today: string;
  providerRef: string;
  p1: SeededResource;
  p3: SeededResource;
  history: SeededResource;
  p2: SeededResource;
  p4: SeededResource;
  p5: SeededResource;
  smallProviderRef: string;
  /** Slots of P3 left free by seeding (the writer of "P3 under writes" books these). */
  p3FreeSlots: Slot[];
  stats: {
    p3Slots: number;
    p3BookedViaApi: number;
    p3BookedViaSql: number;
    p3ApiFailures: Record<string, number>;
    p3ApiBookingsPerSecond: number | null;
    historyPastTimeslots: number;
    historyPastBookings: number;
    historyFutureBookings: number;
    smallProviderAppointments: number;
    seconds: number;
  };
}

interface DayWindow {
  day: number;
  from: string;
  to: string;
}

export async function seedAll(api: Api, db: pg.Pool, options: { apiBookingDeadline: number }): Promise<Seed> {
  const started = Date.now();
  const today = todayIn(PROVIDER_ZONE);
  const crm = (method: string, path: string, body?: unknown) => api.crmOk(method, path, body);

  await crm('POST', '/user', { reference: 'owner@bench', email: 'owner@bench.example', username: 'bench-owner', lastName: 'Bench', firstName: 'Owner' });
  await crm('POST', '/account', { ownerReference: 'owner@bench', accountReference: 'acc@bench', branch: 'misc' });
  await crm('POST', '/provider', { reference: PROVIDER, ownerReference: 'owner@bench', accountReference: 'acc@bench', name: 'Bench Provider', email: 'provider@bench.example' });
  const quarter = (await crm('POST', `/provider/${PROVIDER}/products`, { reference: 'quarter@bench', name: 'Viertelstunde', minDuration: 15, maxDuration: 15 })).product.uuid as string;
  const hour = (await crm('POST', `/provider/${PROVIDER}/products`, { reference: 'hour@bench', name: 'Gruppenstunde', minDuration: 60, maxDuration: 60 })).product.uuid as string;

  const resource = async (ref: string, product: 'quarter@bench' | 'hour@bench', productId: string, windows: DayWindow[], raster: number, capacity: number): Promise<SeededResource> => {
    const created = await crm('POST', `/provider/${PROVIDER}/resources`, {
      reference: ref,
      publicName: `Bench ${ref}`,
      internalName: ref,
      products: [product],
      address: { city: 'Berlin', zip: '10115', street: 'Benchstraße', number: '1' },
    });
    const id = created.uuid as string;
    const timeslots = windows.map((w) => ({
      reference: `${ref.split('@')[0]}-day${w.day}@bench`,
      resourceReference: ref,
      start: `${addDays(today, w.day)}T${w.from}`,
      end: `${addDays(today, w.day)}T${w.to}`,
      raster,
      defaultCapacity: capacity,
      defaultAcceptBookings: true,
      state: 'BOOKABLE',
    }));
    const answer = await crm('POST', `/provider/${PROVIDER}/timeslots`, { timeslots });
    const slots = (answer.timeslots as { uuid: string; start: string; end: string; raster: number }[]).flatMap((t) => gridOf(t, id, productId));
    return { ref, id, productId, slots };
  };
  const days = (count: number, first = 1, from = '08:00', to = '20:00') => Array.from({ length: count }, (_, i) => ({ day: first + i, from, to }));

  const p1 = await resource('p1@bench', 'quarter@bench', quarter, days(DAYS), 15, 1);
  const p3 = await resource('p3@bench', 'quarter@bench', quarter, days(DAYS), 15, 1);
  const history = await resource('history@bench', 'quarter@bench', quarter, days(DAYS), 15, 1);
  const p2 = await resource('p2@bench', 'hour@bench', hour, [{ day: 1, from: '10:00', to: '11:00' }], 60, 100);
  const p4 = await resource('p4@bench', 'quarter@bench', quarter, days(3), 15, 1);
  const p5 = await resource('p5@bench', 'quarter@bench', quarter, days(1, 2), 15, 1);
  log(`seed: provider, 2 products, 6 resources with ${[p1, p3, history, p2, p4, p5].reduce((n, r) => n + r.slots.length, 0)} slots`);

  // The availability probe's provider: a handful of appointments made by the CRM.
  await crm('POST', '/provider', { reference: SMALL_PROVIDER, ownerReference: 'owner@bench', accountReference: 'acc@bench', name: 'Small Provider' });
  await crm('POST', `/provider/${SMALL_PROVIDER}/products`, { reference: 'small-product@bench', name: 'Beratung', minDuration: 30, maxDuration: 30 });
  await crm('POST', `/provider/${SMALL_PROVIDER}/resources`, { reference: 'small-room@bench', publicName: 'Raum', internalName: 'room', products: ['small-product@bench'] });
  const smallAppointments = 5;
  for (let i = 1; i <= smallAppointments; i++) {
    await crm('POST', `/provider/${SMALL_PROVIDER}/appointments`, {
      reference: `small-${i}@bench`,
      start: `${addDays(today, i)}T10:00`,
      end: `${addDays(today, i)}T10:30`,
      resourceReference: 'small-room@bench',
      productReference: 'small-product@bench',
      capacity: 3,
      acceptBookings: true,
    });
  }

  // P3: every other slot booked, first through the booking flow (20 consumers at once) until the deadline.
  const even = p3.slots.filter((_, i) => i % 2 === 0);
  const p3FreeSlots = p3.slots.filter((_, i) => i % 2 === 1);
  let viaApi = 0;
  const failures: string[] = [];
  const apiStarted = Date.now();
  log(`seed: booking ${even.length} of P3's ${p3.slots.length} slots through create_appointment_with_consumer (20 at once, until ${Math.round((options.apiBookingDeadline - Date.now()) / 1000)} s from now)`);
  await pool(
    even,
    20,
    async (slot) => {
      const answer = await bookDirectly(api, slot, nextConsumerEmail('seed'), 30_000);
      if (answer.status === 201) viaApi++;
      else failures.push(describeFailure(answer));
    },
    () => Date.now() >= options.apiBookingDeadline,
  );
  const apiSeconds = (Date.now() - apiStarted) / 1000;
  log(`seed: ${viaApi} P3 bookings through the API in ${apiSeconds.toFixed(1)} s (${apiSeconds > 0 ? (viaApi / apiSeconds).toFixed(1) : '?'}/s)${failures.length ? `, ${failures.length} failed: ${JSON.stringify(tally(failures))}` : ''}`);

  const template = await findBookingTemplate(db, p3.id);
  if (!template) throw new Error('no booking of P3 went through the API: nothing to copy for the rest of the seed');
  const viaSql = viaApi < even.length ? await cloneBookings(db, template, { kind: 'evenSlotsOf', resourceId: p3.id }) : 0;
  if (viaSql) log(`seed: the other ${viaSql} P3 bookings written with SQL as copies of an API booking (the API was too slow to book them all in time)`);

  const historyFuture = await cloneBookings(db, template, { kind: 'sameSlotsAs', resourceId: history.id, sourceResourceId: p3.id });
  const pastTimeslots = await clonePastTimeslots(db, history.id, today, 365, PROVIDER_ZONE);
  const pastBookings = await cloneBookings(db, template, { kind: 'evenSlotsOf', resourceId: history.id, pastOnly: true });
  log(`seed: history resource: ${historyFuture} future bookings (as P3), ${pastTimeslots} past timeslots and ${pastBookings} past bookings (SQL)`);

  return {
    today,
    providerRef: PROVIDER,
    p1,
    p3,
    history,
    p2,
    p4,
    p5,
    smallProviderRef: SMALL_PROVIDER,
    p3FreeSlots,
    stats: {
      p3Slots: p3.slots.length,
      p3BookedViaApi: viaApi,
      p3BookedViaSql: viaSql,
      p3ApiFailures: tally(failures),
      p3ApiBookingsPerSecond: apiSeconds > 0 ? Number((viaApi / apiSeconds).toFixed(1)) : null,
      historyPastTimeslots: pastTimeslots,
      historyPastBookings: pastBookings,
      historyFutureBookings: historyFuture,
      smallProviderAppointments: smallAppointments,
      seconds: Number(((Date.now() - started) / 1000).toFixed(1)),
    },
  };
}
