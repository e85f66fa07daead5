import { performance } from 'node:perf_hooks';
import { bookablesOf, completeHold, fetchListing, nextConsumerEmail, reserve, slotsOf } from '../lib/booking.js';
import { cpuBudget, type CpuUse, describeCpuBudget } from '../lib/cpu.js';
import { type Api, describeFailure } from '../lib/http.js';
import { log } from '../lib/log.js';
import { percentile, round, tally } from '../lib/stats.js';
import type { SeededResource } from '../seed.js';
import { type Figure, ratioFigure } from './figure.js';

export const P1_WHAT = '50 clients: reserve_appointment + create_appointment_with_consumer on distinct slots of one resource';
const REQUEST_TIMEOUT_MS = 20_000;
const MIN_RATIO = 0.25;

/**
 * P1: 50 clients book distinct slots of one resource (30 days × 08–20,
 * raster 15, capacity 1) as consumers do: reserve, then complete the hold.
 * The slots come from one upcoming_bookables answer and are handed out from
 * a shared queue. Clients start new pairs for `seconds`; pairs under way then
 * finish (or time out). bookings/s = completed pairs ÷ time until the last
 * pair ended.
 */
export async function measureP1(
  api: Api,
  resource: SeededResource,
  b0: Figure | undefined,
  seconds: number,
  deadline: number,
  cpuMeter: () => { stop(): CpuUse | null },
  clients = 50,
): Promise<Figure> {
  const listing = await fetchListing(api, resource.id, { timeoutMs: 30_000 });
  let slots = listing.status === 200 ? slotsOf(bookablesOf(listing.body), resource.productId) : [];
  const source = slots.length ? 'upcoming_bookables' : 'the seeded grid (the listing did not answer)';
  if (!slots.length) {
    log(`P1: upcoming_bookables gave no slots (${describeFailure(listing)}); using the seeded grid`);
    slots = resource.slots.map((s) => ({ ...s, appointmentId: null }));
  }
  const queue = [...slots];
  const pairMs: number[] = [];
  const failures: string[] = [];
  let completed = 0;
  const meter = cpuMeter();
  const started = performance.now();
  const stopAt = started + seconds * 1000;
  // No request outlives the phase's deadline.
  const timeout = () => Math.max(1_000, Math.min(REQUEST_TIMEOUT_MS, deadline - Date.now()));
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < stopAt && Date.now() < deadline && queue.length) {
        const slot = queue.shift()!;
        const t0 = performance.now();
        const reserved = await reserve(api, slot, timeout());
        if (reserved.status !== 200) {
          failures.push(`reserve ${describeFailure(reserved)}`);
          continue;
        }
        const booked = await completeHold(api, slot, reserved.body, nextConsumerEmail('p1'), timeout());
        if (booked.status !== 201) {
          failures.push(`create ${describeFailure(booked)}`);
          continue;
        }
        completed++;
        pairMs.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = cpuBudget(meter.stop(), completed, 'pair', b0?.value ? b0.value * MIN_RATIO : null);
  if (cpu) log(`P1: ${describeCpuBudget(cpu)}`);
  const perSecond = completed / elapsed;
  return ratioFigure(
    { id: 'P1', what: P1_WHAT, unit: 'bookings/s', baseline: b0, min: MIN_RATIO },
    perSecond,
    {},
    {
      clients,
      completedPairs: completed,
      elapsedSeconds: round(elapsed, 2),
      pairP50Ms: round(percentile(pairMs, 50)),
      pairP99Ms: round(percentile(pairMs, 99)),
      non2xx: failures.length,
      failures: tally(failures),
      slotsOffered: slots.length,
      slotSource: source,
      listingMs: round(listing.ms),
      // Where the machine's CPU went, per completed pair (reserve + completion, with their mails and events).
      cpu,
    },
  );
}
