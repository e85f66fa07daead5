import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { bookDirectly, nextConsumerEmail } from '../lib/booking.js';
import { cpuBudget, type CpuUse, describeCpuBudget } from '../lib/cpu.js';
import { type Api, describeFailure } from '../lib/http.js';
import { log } from '../lib/log.js';
import { percentile, round, tally } from '../lib/stats.js';
import type { Slot } from '../lib/calendar.js';
import type { SeededResource } from '../seed.js';
import { type Figure, ratioFigure } from './figure.js';

export const P2_WHAT = '200 simultaneous consumer bookings on one slot of capacity 100';
const CAPACITY = 100;
const REQUESTS = 200;
const MIN_RATIO = 0.25;

/**
 * P2: 200 consumers (distinct e-mails) book the one slot of capacity 100 at
 * the same moment. bookings/s = successes ÷ wall time of the burst. Exactly
 * 100 must succeed (201), every other answer must be a 4xx, and the database
 * must hold exactly 100 BOOKED/REQUESTED participations on that slot, also
 * after a second burst on the full slot (refusalBurst).
 */
export async function measureP2(
  api: Api,
  db: pg.Pool,
  resource: SeededResource,
  b1: Figure | undefined,
  timeoutMs: number,
  cpuMeter: () => { stop(): CpuUse | null },
): Promise<Figure> {
  const slot = resource.slots[0]!;
  const meter = cpuMeter();
  const { answers, started, wall } = await burst(api, slot, 'p2', timeoutMs);
  const succeeded = answers.filter((a) => a.status === 201).length;
  // Per booking, its share of the refusals included: what the burst cost the machine ÷ the places it gave.
  const cpu = cpuBudget(meter.stop(), succeeded, 'booking', b1?.value ? b1.value * MIN_RATIO : null);
  if (cpu) log(`P2: ${describeCpuBudget(cpu)}`);
  const others = answers.filter((a) => a.status !== 201);
  const full = await refusalBurst(api, slot, timeoutMs, cpuMeter, cpu?.targetAllowsMsPerUnit ?? null);
  // Counted after both bursts: the one on the full slot must not have added a place either.
  const { rows } = await db.query<{ places: string; appointments: string }>(
    `select count(p.id) filter (where p.state in ('BOOKED', 'REQUESTED')) as places, count(distinct a.id) as appointments
       from appointment a left join participation p on p.appointment_id = a.id
      where a.timeslot_id = $1 and a.start = $2 and a.state = 'ACTIVE'`,
    [slot.timeslotId, slot.start],
  );
  const places = Number(rows[0]?.places ?? 0);
  return ratioFigure(
    { id: 'P2', what: P2_WHAT, unit: 'bookings/s', baseline: b1, min: MIN_RATIO },
    succeeded / wall,
    {
      'exactly 100 succeed': succeeded === CAPACITY,
      'every other answer is a 4xx': others.every((a) => a.status >= 400 && a.status < 500),
      'every booking on the full slot is refused with a 4xx': full.answers.every((a) => a.status >= 400 && a.status < 500),
      'database holds exactly 100 places, 0 overbooked': places === CAPACITY,
    },
    {
      requests: REQUESTS,
      succeeded,
      wallSeconds: round(wall, 2),
      // When the answers came, from the start of the burst: where the wall time goes.
      successMs: answerTimes(answers.filter((a) => a.status === 201), started),
      refusalMs: answerTimes(others, started),
      statuses: tally(answers.map((a) => a.status)),
      otherAnswers: tally(others.map(describeFailure)),
      placesInDatabase: places,
      overbooked: Math.max(0, places - CAPACITY),
      appointmentsForTheSlot: Number(rows[0]?.appointments ?? 0),
      // Where the machine's CPU went during the burst, per place given (refusals included).
      cpu,
      // A second burst on the slot once full: what a refusal alone costs (see refusalBurst).
      fullSlotBurst: full.details,
    },
  );
}

/**
 * A second burst of REQUESTS bookings on the slot the first one filled:
 * every answer must be a refusal. Its CPU per request is what a refusal
 * costs the machine apart from a place given (the HTTP request, the shared
 * scope read, the timeslot read with BEGIN, ROLLBACK, the 412), the floor
 * under P2's cost per request: the log line compares it with what the
 * target leaves for each request of the first burst.
 */
async function refusalBurst(api: Api, slot: Slot, timeoutMs: number, cpuMeter: () => { stop(): CpuUse | null }, targetMsPerPlace: number | null) {
  const meter = cpuMeter();
  const { answers, wall } = await burst(api, slot, 'p2-full', timeoutMs);
  const cpu = cpuBudget(meter.stop(), REQUESTS, 'refusal', null);
  // The first burst makes REQUESTS requests for CAPACITY places.
  const perRequest = targetMsPerPlace === null ? null : round((targetMsPerPlace * CAPACITY) / REQUESTS, 2);
  if (cpu) {
    log(`P2: ${REQUESTS} more on the full slot in ${Math.round(wall * 1000)} ms (${answers.filter((a) => a.status === 412).length} × 412); ${describeCpuBudget(cpu)}${perRequest === null ? '' : `; the target leaves ${perRequest} ms per request of the first burst`}`);
  }
  return {
    answers,
    details: { requests: REQUESTS, wallSeconds: round(wall, 2), statuses: tally(answers.map((a) => a.status)), cpu, targetAllowsMsPerRequest: perRequest },
  };
}

/** REQUESTS bookings of the slot by distinct consumers at the same moment; wall = seconds until the last answer. */
async function burst(api: Api, slot: Slot, tag: string, timeoutMs: number) {
  const started = performance.now();
  const answers = await Promise.all(Array.from({ length: REQUESTS }, () => bookDirectly(api, slot, nextConsumerEmail(tag), timeoutMs)));
  return { answers, started, wall: (Math.max(...answers.map((a) => a.at)) - started) / 1000 };
}

/** First, median and last answer of a group, in ms after `started`. */
function answerTimes(answers: readonly { at: number }[], started: number) {
  const times = answers.map((a) => a.at - started);
  return { first: round(percentile(times, 0) ?? 0, 1), p50: round(percentile(times, 50) ?? 0, 1), last: round(percentile(times, 100) ?? 0, 1) };
}
