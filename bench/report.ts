import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Figure } from './figures/figure.js';
import { type CpuBudget, describeCpuBudget } from './lib/cpu.js';
import type { Machine } from './machine.js';

export interface RunResults {
  date: string;
  commit: string;
  /** The working tree had uncommitted changes to tracked files when the run started. */
  dirty: boolean;
  machine: Machine;
  /** GATEWAY_PROCESSES as passed to npm start, or null when left to the service's default. */
  gatewayProcesses: string | null;
  durationSeconds: number;
  seed: Record<string, unknown>;
  /** Warnings and errors the service logged during the run (LOG_LEVEL=warn): how many, and the first distinct messages. */
  serviceLog: { warnings: number; errors: number; firstMessages: string[] } | null;
  figures: Figure[];
}

const number = (value: number | null, digits?: number) => {
  if (value === null) return '—';
  const fixed = digits ?? (Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2);
  return value.toLocaleString('en-US', { minimumFractionDigits: fixed, maximumFractionDigits: fixed });
};
const ratioText = (f: Figure) => (f.ratio === null ? (f.ratioOf ? '—' : '') : `${f.ratio < 0.01 ? f.ratio.toFixed(4) : f.ratio.toFixed(3)}× ${f.ratioOf}`);
const metText = (f: Figure) => {
  if (f.stretch) return f.value === null ? `${f.error?.startsWith('skipped') ? 'skipped' : 'not measured'} (stretch)` : f.met ? 'yes (stretch)' : 'no (stretch)';
  return f.met === null ? (f.target === 'baseline' ? 'baseline' : '—') : f.met ? 'yes' : 'NO';
};
/** Figures whose target the run must meet (baselines and stretch figures are not). */
export const judged = (figures: Figure[]) => figures.filter((f) => f.met !== null && !f.stretch);

/** The final table for stdout, with the failed checks and errors below it. */
export function formatTable(results: RunResults): string {
  const header = ['figure', 'value', 'ratio', 'target', 'met'];
  const rows = results.figures.map((f) => [f.id, `${number(f.value)} ${f.unit}`, ratioText(f), f.target, metText(f)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  const notes: string[] = [];
  for (const f of results.figures) {
    const failed = Object.entries(f.checks).filter(([, ok]) => !ok).map(([check]) => check);
    if (failed.length) notes.push(`${f.id}: not met: ${failed.join('; ')}`);
    if (f.error) notes.push(`${f.id}: ${f.error}`);
    const cpu = f.details.cpu as CpuBudget | null | undefined;
    if (cpu) notes.push(`${f.id}: ${describeCpuBudget(cpu)}`);
  }
  const met = judged(results.figures);
  return [
    `npm run bench — ${results.date}, commit ${results.commit}${results.dirty ? ' (+ uncommitted changes)' : ''}, ${results.machine.cpuModel} × ${results.machine.cores}, node ${results.machine.node}, load ${results.machine.loadAverage.join('→')}, gateways: ${results.gatewayProcesses ?? 'default'}, ${results.durationSeconds} s`,
    '',
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
    `${met.filter((f) => f.met).length} of ${met.length} targets met.`,
    ...(notes.length ? ['', ...notes] : []),
    '',
  ].join('\n');
}

export function writeResults(path: string, results: RunResults): void {
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
}

const COLUMNS = ['B0', 'B1 hot', 'P1', 'P2', 'P3', 'P3 under writes', 'P3 history', 'availability', 'P4', 'P4 stretch', 'P5'];

export const BENCHMARKS_HEADER = `# Benchmarks

\`npm run bench\` measures the figures of issue 10 in one run against the real
PostgreSQL and Redis and appends one row per run to the table below. It
needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth, \`pgbench\`
installed) and Redis on 127.0.0.1:6379; it drops and recreates the database
\`booking_bench\`, empties Redis database 3, starts its own service with
\`npm start\` (on a free port, \`HOLD_MINUTES=0.1\`, no WebSocket connection
limit for loopback; \`GATEWAY_PROCESSES\` is passed through), seeds it
through the REST API and stops it at the end. A run takes at most 5 minutes.
Progress goes to stderr, the table to stdout, every number to
\`bench/results.json\` (latest run).

Absolute numbers depend on the machine and on what else runs on it, so each
target is a **ratio to a baseline measured in the same run**:

| figure | what is measured | target |
|---|---|---|
| B0 | \`POST /graphql {"query":"{ __typename }"}\`, 50 connections, 5 s (autocannon): req/s of a gateway answer that costs nothing | baseline |
| B1 hot | pgbench, 16 clients, 5 s: \`BEGIN; UPDATE bench_slot SET capacity_left = capacity_left - 1 WHERE id = 1 AND capacity_left > 0; INSERT INTO bench_booking …; END\` on one row of a scratch table: TPS of the database when every booking hits one row | baseline |
| P1 | 50 clients, each \`reserve_appointment\` then \`create_appointment_with_consumer\` on the next distinct free slot of one resource (30 days × 08–20, raster 15, capacity 1; slots from one \`upcoming_bookables\` answer), 10 s: completed pairs ÷ time until the last pair ended; p50/p99 of a pair and every non-2xx in the details | ≥ 0.25× B0 |
| P2 | 200 simultaneous \`create_appointment_with_consumer\` (distinct e-mails) on one slot of capacity 100: successes ÷ wall time of the burst | ≥ 0.25× B1 hot; exactly 100 answer 201, every other answer a 4xx, the database holds exactly 100 BOOKED/REQUESTED places |
| P3 | \`GET /resources/:ref/upcoming_bookables\` with default parameters on a resource with 30 days × 08–20 of 15-minute slots, every other slot booked, 50 connections, 5 s, bodies read and dropped: req/s (single-client latency, answer size and bookable count in the details) | ≥ 0.1× B0 |
| P3 under writes | the P3 flood while a writer books free slots of that resource at 10/s; after each booking answers, the writer reads the listing again and counts a violation if the slot is still listed with places left | ≥ 0.05× B0; 0 violations |
| P3 history | one client, \`Cache-Control: no-cache\` (computed afresh), median of up to 20 listings each of a resource with the same 30 future days plus 12 months of past timeslots and bookings, and of the 30-day resource: history ÷ 30-day | ≤ 1.2 |
| availability | while 50 connections flood P3 (the same flood as P3), a CRM asks \`GET /crms/:crmId/provider/:providerRef/appointments\` of a small provider (5 appointments) one request after the other, 50 ms apart: p99 latency (a request without an answer in 10 s counts as 10 s) | ≤ 500 ms |
| P4 | 1,000 graphql-ws sockets subscribe to \`capacityChanged\` of one resource; after a warm-up booking every socket has seen, 20 bookings at 5/s: p99 of (socket received the slot's change − the booking's HTTP answer arrived), over every socket and booking; negative when the change overtakes the answer, taken as it is | ≤ 250 ms; every socket gets every change |
| P4 stretch | the same with 5,000 sockets, when time is left at the end of the run (not counted among the targets) | ≤ 250 ms |
| P5 | with \`HOLD_MINUTES=0.1\` and a subscriber open, 20 holds placed at once and never completed: p99 of (subscriber received the change freeing the slot − the hold's \`expires_at\`) | ≤ 1 s; each hold freed by exactly one announcement (one change from full to places left as the subscriber sees it; repeats of a free value, which the README calls harmless, are counted in the details); its participation row gone |

Seeding: P3's bookings go through \`create_appointment_with_consumer\` (20 at
once) until a deadline; when the service is too slow for that, the rest are
written with SQL as copies of those bookings (\`seed.p3BookedViaSql\` in
results.json). The history resource's rows are SQL copies too (the booking
flow cannot book the past). Phases are time-bounded: a figure the service
could not reach in time shows what was measured (e.g. 0 req/s) and fails its
target. Between phases the run waits (bounded) until the service has worked
off the previous phase's queue; after a phase that booked, also until the
worker has sent its mails (from the run of 2026-11-23 22:02 on; before, P1's
~3,000 mails were still rendered during P2 and the P3 flood).

\`npm run bench -- --only P4,P5\` seeds and runs only the named phases (for
working on one figure); it writes \`bench/results.partial.json\` and leaves
results.json and this file alone. Order of a full run: B0, B1 hot, P3
(single client), P3 history, P4, P5, P1, P2, P3 with the availability
probe, P3 under writes, page visit, P4 stretch.

Beyond issue 10's table, results.json and the printed table carry **page
visit** (no target, not a column here): what a visitor of the booking page
costs, i.e. \`GET /book/:ref\`, one week of \`upcoming_bookables\` and
\`public_data\` in turn on 50 connections for 5 s (autocannon), as visits/s
and its ratio to B0.

The machine's 2 cores are shared with PostgreSQL, Redis, the worker, the
load generator and whatever else runs: \`load\` is the 1-minute load
average at the start and end of the run; compare rows with similar load.
Besides autocannon (B0, page visit) and pgbench (B1), the load generator is
this process, with node:http keep-alive connections (from the run of
2026-11-23 08:00 on; before, fetch, which cost it about twice the CPU per
request). The listing floods (P3, the availability probe's, P3 under
writes) drop the bodies unread, from the run of 2026-11-23 22:00 on; before,
autocannon decoded every 0.4–0.75 MB body into a string, which cost the
benchmark's process more CPU than the gateway spent answering (perf), and
P3 read about a third of what it reads since (0.13× against 0.44× B0).
Each cell: value (ratio) and ✓ / ✗ for its target.

| date | commit | machine | gateways | ${COLUMNS.join(' | ')} | met |
|---|---|---|---|${COLUMNS.map(() => '---').join('|')}|---|
`;

function cell(f: Figure | undefined): string {
  if (!f) return '—';
  if (f.value === null && f.error?.startsWith('skipped')) return 'skipped';
  const value = f.value === null ? 'n/a' : `${number(f.value)} ${f.unit}`;
  const ratio = f.ratio === null ? '' : ` (${f.ratio < 0.01 ? f.ratio.toFixed(4) : f.ratio.toFixed(3)}×)`;
  const mark = f.met === null ? '' : f.met ? ' ✓' : ' ✗';
  return `${value}${ratio}${mark}`;
}

/** Appends the run to BENCHMARKS.md's table; the text above the table is rewritten from BENCHMARKS_HEADER, the rows are kept. */
export function appendBenchmarks(path: string, results: RunResults): void {
  const existing = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const rows = existing
    .split('\n')
    .filter((line) => /^\| \d{4}-\d{2}-\d{2} /.test(line))
    .map((line) => `${line}\n`)
    .join('');
  const base = BENCHMARKS_HEADER + rows;
  const byId = new Map(results.figures.map((f) => [f.id, f]));
  const counted = judged(results.figures);
  const m = results.machine;
  const row = [
    results.date.slice(0, 16).replace('T', ' '),
    `${results.commit}${results.dirty ? '+' : ''}`,
    `${m.cpuModel} × ${m.cores}, ${m.memoryGiB} GiB, node ${m.node}, load ${m.loadAverage.map((l) => l.toFixed(1)).join('→')}`,
    results.gatewayProcesses ?? 'default',
    ...COLUMNS.map((id) => cell(byId.get(id))),
    `${counted.filter((f) => f.met).length}/${counted.length}`,
  ];
  writeFileSync(path, `${base}| ${row.join(' | ')} |\n`);
}
