/**
 * `npm run bench`: the figures of issue 10 in one run, against the real
 * PostgreSQL and Redis. Starts its own service (npm start), seeds it through
 * the REST API, measures every phase within its own deadline, prints the
 * table on stdout, writes bench/results.json and appends a row to
 * BENCHMARKS.md. Progress goes to stderr. The whole run stays within 5
 * minutes; its child processes are stopped on every way out (also Ctrl-C).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { AVAILABILITY_WHAT, availabilityFigure, probeAppointmentsApart, type ProbeSamples } from './figures/availability.js';
import { B0_WHAT, B1_WHAT, measureB0, measureB1 } from './figures/baselines.js';
import { type Figure, NO_TARGET, unmeasured } from './figures/figure.js';
import { measureP1, P1_WHAT } from './figures/p1.js';
import { measureP2, P2_WHAT } from './figures/p2.js';
import { floodListing, measureHistory, measureUnderWrites, P3_HISTORY_WHAT, P3_WHAT, P3_WRITES_WHAT, p3Figure, singleClient, type SingleClient } from './figures/p3.js';
import { measureP4, SlotCursor } from './figures/p4.js';
import { measureP5 } from './figures/p5.js';
import { measurePageVisits, PAGE_VISIT_WHAT } from './figures/page-visit.js';
import { installCleanup, interrupted, stopAll } from './lib/children.js';
import { type CpuBudget, startCpuMeter, withCatchUp } from './lib/cpu.js';
import { benchPool } from './lib/db.js';
import { Api } from './lib/http.js';
import { Budget, errorMessage, log } from './lib/log.js';
import { settle, waitForWorker } from './lib/settle.js';
import { gitCommit, machine } from './machine.js';
import { appendBenchmarks, formatTable, type RunResults, writeResults } from './report.js';
import { type Seed, seedAll } from './seed.js';
import { CRM_ID, DATABASE_URL, issueCrmKey, resetStores, type RunningService, startService, summarizeLog } from './service.js';

const projectRoot = new URL('..', import.meta.url).pathname;
/**
 * The phases end by TOTAL_MS − RESERVE_MS; a watchdog ends the run at
 * TOTAL_MS + 10 s whatever happens (stopping the service takes at most
 * 15 s more), so it stays below 5 minutes.
 */
const TOTAL_MS = 270_000;
/** Kept free at the end of the phases for stopping the service and writing the report. */
const RESERVE_MS = 10_000;
const FLOOD_SECONDS = 5;
/** Issue 10's figures in the order of its table (and the project's own after them): what each measures, its unit and target. */
const CATALOGUE: Record<string, { what: string; unit: string; target: string; stretch?: boolean }> = {
  B0: { what: B0_WHAT, unit: 'req/s', target: 'baseline' },
  'B1 hot': { what: B1_WHAT, unit: 'TPS', target: 'baseline' },
  P1: { what: P1_WHAT, unit: 'bookings/s', target: '≥ 0.25× B0' },
  P2: { what: P2_WHAT, unit: 'bookings/s', target: '≥ 0.25× B1 hot' },
  P3: { what: P3_WHAT, unit: 'req/s', target: '≥ 0.1× B0' },
  'P3 under writes': { what: P3_WRITES_WHAT, unit: 'req/s', target: '≥ 0.05× B0' },
  'P3 history': { what: P3_HISTORY_WHAT, unit: 'ms median', target: 'cost ≤ 1.2× 30-day' },
  availability: { what: AVAILABILITY_WHAT, unit: 'ms p99', target: 'p99 ≤ 500 ms' },
  P4: { what: 'capacityChanged to 1,000 sockets, 20 bookings at 5/s', unit: 'ms p99', target: 'p99 ≤ 250 ms at 1000 sockets' },
  'P4 stretch': { what: 'capacityChanged to 5,000 sockets, 20 bookings at 5/s', unit: 'ms p99', target: 'p99 ≤ 250 ms at 5000 sockets', stretch: true },
  P5: { what: 'hold expiry announced', unit: 'ms p99 late', target: 'p99 ≤ 1 s late, exactly once' },
  // Beyond issue 10's table: measured and shown with its ratio, never judged (not a column of BENCHMARKS.md).
  'page visit': { what: PAGE_VISIT_WHAT, unit: 'visits/s', target: NO_TARGET },
};
const ORDER = Object.keys(CATALOGUE);

/** A figure that was not measured, with the reason. */
function notMeasured(id: string, reason: string): Figure {
  const spec = CATALOGUE[id]!;
  const figure = unmeasured(id, spec.what, spec.unit, spec.target, reason);
  return spec.stretch ? { ...figure, stretch: true } : figure;
}

/** `npm run bench -- --only P4,P5`: seed, then only these phases; a partial run writes bench/results.partial.json only. */
const onlyArg = process.argv.indexOf('--only');
const only = onlyArg >= 0 ? new Set((process.argv[onlyArg + 1] ?? '').split(',').map((id) => id.trim())) : null;
const wanted = (id: string) => !only || only.has(id);

installCleanup();
const budget = new Budget(TOTAL_MS);
const figures: Figure[] = [];
const byId = (id: string) => figures.find((f) => f.id === id && f.value !== null);
const workDir = mkdtempSync(join(tmpdir(), 'booking-bench-'));
const { commit, dirty } = gitCommit(projectRoot);
let service = null as RunningService | null;
let db = null as pg.Pool | null;
let fatal = null as string | null;
let seedStats: Seed['stats'] | Record<string, never> = {};

/** Runs one phase if enough time is left; a phase that throws is reported as not measured, and the run goes on. */
async function phase(id: string, needsMs: number, run: () => Promise<Figure>, runFor: string[] = [id]): Promise<void> {
  if (!runFor.some(wanted)) return;
  if (budget.remainingMs() - RESERVE_MS < needsMs) {
    log(`${id}: skipped, ${Math.round(budget.remainingMs() / 1000)} s left`);
    figures.push(notMeasured(id, 'skipped: not enough time left in the 5-minute run'));
    return;
  }
  log(`${id}: ${CATALOGUE[id]!.what}`);
  try {
    const figure = await run();
    figures.push(figure);
    const ratio = figure.ratio === null ? '' : `, ${figure.ratio}× ${figure.ratioOf}`;
    log(`${id}: ${figure.value ?? 'n/a'} ${figure.unit}${ratio} → ${figure.met === null ? 'baseline' : figure.met ? 'met' : 'NOT met'}${figure.error ? ` (${figure.error})` : ''}`);
  } catch (error) {
    log(`${id}: failed: ${errorMessage(error)}`);
    figures.push(notMeasured(id, `failed: ${errorMessage(error)}`));
  }
}

/**
 * Lets the service work off what the last phase queued, at most `maxMs`:
 * the gateways' answers still being computed, and after a phase that
 * booked, the worker's outbox rows and mails (two per booking). P1 and P2
 * leave thousands of mails; rendered during the P3 flood, they took a
 * worker's share of the cores from it (P3 0.12–0.22× B0 after them, 0.44×
 * without), as seeding's mails would from the first figures.
 */
async function settleService(after: string, maxMs: number, booked = false): Promise<void> {
  if (!service || !(wanted(after) || (after === 'P3' && wanted('availability')))) return;
  const deadline = budget.deadline(maxMs, RESERVE_MS);
  const result = await settle(service.baseUrl, deadline);
  let worker = '';
  if (booked && db) {
    const quiet = await waitForWorker(pendingWorkOf(db), () => mailFilesIn(workDir), deadline);
    worker = `, worker ${quiet.quiet ? 'caught up' : 'still busy'} after ${(quiet.waitedMs / 1000).toFixed(1)} s`;
  }
  log(`${result.settled ? 'settled' : 'still busy'} ${(result.waitedMs / 1000).toFixed(1)} s after ${after}${worker}`);
}

/**
 * Work the worker still has (null when the database does not answer):
 * outbox rows not yet handed to Redis, and mails queued but not sent (they
 * wait MAIL_DELAY_MS before they start, so a quiet mail folder alone does
 * not say they are done).
 */
const pendingWorkOf = (pool: pg.Pool) => () =>
  pool
    .query<{ n: string }>(
      `select (select count(*) from outbox_message where dispatched_at is null)
            + (select count(*) from mail_delivery where status in ('QUEUED', 'SENDING', 'RETRYING')) as n`,
    )
    .then((r) => Number(r.rows[0]!.n), () => null);

/** Mails the worker has written so far (MAIL_DIR of the service). */
const mailFilesIn = (dir: string) => {
  const mailDir = join(dir, 'mail');
  return existsSync(mailDir) ? readdirSync(mailDir).length : 0;
};

async function measureAll(): Promise<void> {
  log(`work folder ${workDir}; resetting database booking_bench and Redis database 3`);
  await resetStores();
  service = await startService(workDir, budget.deadline(120_000, 150_000));
  log(`service healthy after ${(budget.elapsedMs() / 1000).toFixed(1)} s`);
  db = benchPool(DATABASE_URL);
  const pool = db;
  const api = new Api(service.baseUrl, CRM_ID, await issueCrmKey(service.env));
  // At least 5 s of booking through the API, so there are API-made bookings to copy when the start was slow.
  const seed = await seedAll(api, pool, { apiBookingDeadline: Math.max(Date.now() + 5_000, budget.deadline(30_000, 200_000)) });
  seedStats = seed.stats;
  const quiet = await waitForWorker(pendingWorkOf(pool), () => mailFilesIn(workDir), budget.deadline(20_000, 150_000));
  log(`worker ${quiet.quiet ? 'caught up' : `still busy (${quiet.pending ?? '?'} outbox rows and mails pending)`} after ${(quiet.waitedMs / 1000).toFixed(1)} s; seeding took ${seed.stats.seconds} s`);
  if (service) log(`settled ${((await settle(service.baseUrl, budget.deadline(10_000, RESERVE_MS))).waitedMs / 1000).toFixed(1)} s after seeding`);

  const base = service.baseUrl;
  // The service's processes are the group of the `npm start` the benchmark spawned.
  const serviceGroup = service.child.pid;
  const cpuMeter = () => startCpuMeter(serviceGroup);
  /** settleService after a booking phase, its CPU added to the phase's figure: the mails are part of what a booking costs. */
  const settleCounting = async (id: string, maxMs: number) => {
    const meter = cpuMeter();
    await settleService(id, maxMs, true);
    const figure = byId(id);
    const cpu = figure?.details.cpu as CpuBudget | null | undefined;
    if (figure && cpu) figure.details.cpu = withCatchUp(cpu, meter.stop());
  };
  await phase('B0', 8_000, () => measureB0(base, FLOOD_SECONDS));
  await settleService('B0', 10_000);
  await phase('B1 hot', 8_000, () => measureB1(pool, workDir, FLOOD_SECONDS));

  // P3's single-client latency, answer size and bookable count (details of the P3 figure).
  const expectedP3 = seed.stats.p3Slots - seed.stats.p3BookedViaApi - seed.stats.p3BookedViaSql;
  let single: SingleClient = { latenciesMs: [], statuses: [], bytes: null, bookables: null };
  if (wanted('P3')) {
    try {
      single = await singleClient(api, seed.p3.id, 5, budget.deadline(15_000, RESERVE_MS));
      log(`P3 single client: ${single.latenciesMs.map((ms) => Math.round(ms)).join(', ')} ms; ${single.bookables ?? '?'} bookables (expected ${expectedP3}), ${single.bytes ?? '?'} bytes`);
    } catch (error) {
      log(`P3 single client failed: ${errorMessage(error)}`);
    }
  }
  await phase('P3 history', 8_000, () =>
    measureHistory(api, seed.p3.id, seed.history.id, 20, budget.deadline(25_000, RESERVE_MS)),
  );

  const p4Slots = new SlotCursor(seed.p4.slots);
  await phase('P4', 30_000, () =>
    measureP4(api, seed.p4, p4Slots, { id: 'P4', sockets: 1_000, openDeadline: budget.deadline(30_000, RESERVE_MS), deadline: budget.deadline(60_000, RESERVE_MS) }),
  );
  await settleService('P4', 10_000, true);
  await phase('P5', 25_000, () =>
    measureP5(api, pool, seed.p5, budget.deadline(35_000, RESERVE_MS)),
  );

  await phase('P1', 25_000, () =>
    measureP1(api, seed.p1, byId('B0'), 10, budget.deadline(40_000, RESERVE_MS), cpuMeter),
  );
  await settleCounting('P1', 25_000);
  await phase('P2', 15_000, () =>
    measureP2(api, pool, seed.p2, byId('B1 hot'), Math.max(5_000, Math.min(30_000, budget.remainingMs() - RESERVE_MS - 5_000)), cpuMeter),
  );
  await settleCounting('P2', 15_000);

  // P3 and the availability probe share one flood: the probe is what a CRM sees while the public hammers a calendar.
  let probe = null as ProbeSamples | null;
  await phase(
    'P3',
    12_000,
    async () => {
      const probing = probeAppointmentsApart(api, seed.smallProviderRef);
      const result = await floodListing(api, seed.p3.id, FLOOD_SECONDS);
      probe = await probing.stop().catch((error: unknown) => {
        log(`availability: ${errorMessage(error)}`);
        return null;
      });
      return p3Figure(byId('B0'), single, result, expectedP3);
    },
    ['P3', 'availability'],
  );
  if (probe && wanted('availability')) {
    const figure = availabilityFigure(probe, seed.stats.smallProviderAppointments);
    figures.push(figure);
    log(`availability: p99 ${figure.value ?? 'n/a'} ms over ${probe.statuses.length} probes → ${figure.met ? 'met' : 'NOT met'}`);
  } else if (wanted('availability')) {
    figures.push(notMeasured('availability', 'not measured: the P3 flood did not run'));
  }
  await settleService('P3', 25_000);
  await phase('P3 under writes', 12_000, () =>
    measureUnderWrites(api, seed.p3.id, seed.p3FreeSlots, byId('B0'), FLOOD_SECONDS, budget.deadline(30_000, RESERVE_MS)),
  );
  await settleService('P3 under writes', 20_000, true);
  await phase('page visit', 8_000, () => measurePageVisits(base, seed.p3.id, seed.today, byId('B0'), FLOOD_SECONDS));
  await settleService('page visit', 10_000);

  await phase('P4 stretch', 45_000, () =>
    measureP4(api, seed.p4, p4Slots, {
      id: 'P4 stretch',
      sockets: 5_000,
      openDeadline: budget.deadline(45_000, RESERVE_MS + 15_000),
      deadline: budget.deadline(80_000, RESERVE_MS),
      stretch: true,
    }),
  );
}

let finished = false;
/** Stops the service, then reports what was measured. Runs once: at the end, or when the watchdog fires. */
async function finish(): Promise<void> {
  if (finished || interrupted()) return;
  finished = true;
  if (service) {
    log('stopping the service');
    await service.stop();
  }
  await stopAll(5_000);
  await db?.end().catch(() => {});
  // Every figure of the table appears, also those the run never reached (it was aborted or stopped by the watchdog).
  for (const id of ORDER) {
    if (wanted(id) && !figures.some((f) => f.id === id)) {
      figures.push(notMeasured(id, `not reached: ${fatal ?? 'the run ended first'}`));
    }
  }
  figures.sort((a, b) => ORDER.indexOf(a.id) - ORDER.indexOf(b.id));
  const results: RunResults = {
    date: new Date().toISOString(),
    commit,
    dirty,
    machine: machine(),
    gatewayProcesses: process.env.GATEWAY_PROCESSES ?? null,
    durationSeconds: Math.round(budget.elapsedMs() / 1000),
    seed: seedStats,
    serviceLog: service ? summarizeLog(service.logFile) : null,
    figures,
  };
  if (results.serviceLog && (results.serviceLog.errors || results.serviceLog.warnings)) {
    log(`the service logged ${results.serviceLog.errors} errors and ${results.serviceLog.warnings} warnings, e.g.:\n  ${results.serviceLog.firstMessages.join('\n  ')}`);
  }
  if (figures.length && only) {
    writeResults(join(projectRoot, 'bench', 'results.partial.json'), results);
    process.stdout.write(formatTable(results));
    log('partial run (--only): details in bench/results.partial.json; results.json and BENCHMARKS.md left alone');
  } else if (figures.length) {
    writeResults(join(projectRoot, 'bench', 'results.json'), results);
    appendBenchmarks(join(projectRoot, 'BENCHMARKS.md'), results);
    process.stdout.write(formatTable(results));
    log(`wrote bench/results.json and a row of BENCHMARKS.md; the run took ${results.durationSeconds} s`);
  }
  if (fatal || process.env.BENCH_KEEP_OUTPUT) {
    log(`service output kept in ${workDir}`);
    if (fatal) process.exitCode = 1;
  } else {
    rmSync(workDir, { recursive: true, force: true });
  }
}

const watchdog = setTimeout(() => {
  fatal = 'the run overran its time budget; stopped';
  log(fatal);
  void finish().finally(() => process.exit(1));
}, TOTAL_MS + 10_000);
watchdog.unref();

try {
  await measureAll();
} catch (error) {
  fatal = errorMessage(error);
  if (!interrupted()) log(`run aborted: ${fatal}`);
}
await finish();
clearTimeout(watchdog);
// Sockets or timers a phase could not close must not keep the process alive. After Ctrl-C the signal handler exits once its children are stopped.
if (!interrupted()) process.exit();
