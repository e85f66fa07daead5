import type { Api } from '../lib/http.js';
import { sleep } from '../lib/log.js';
import { percentile, round, tally } from '../lib/stats.js';
import { type Figure, limitFigure } from './figure.js';

export const AVAILABILITY_WHAT = 'CRM GET …/appointments of a small provider while 50 connections flood P3';
const TIMEOUT_MS = 10_000;

export interface ProbeSamples {
  latenciesMs: number[];
  statuses: number[];
  /** Appointments in the last 200 answer. */
  lastCount: number | null;
}

/**
 * The availability probe: a CRM asks for the appointments of a small
 * provider, one request after the other with a pause of `pauseMs`, until
 * `done()` says the flood is over. A request that gets no answer within
 * 10 s counts with its time so far (a lower bound).
 */
export async function probeAppointments(api: Api, providerRef: string, done: () => boolean, pauseMs = 50): Promise<ProbeSamples> {
  const samples: ProbeSamples = { latenciesMs: [], statuses: [], lastCount: null };
  while (!done()) {
    const answer = await api.crm('GET', `/provider/${providerRef}/appointments`, undefined, TIMEOUT_MS);
    samples.latenciesMs.push(answer.ms);
    samples.statuses.push(answer.status);
    if (answer.status === 200 && Array.isArray(answer.body)) samples.lastCount = answer.body.length;
    await sleep(pauseMs);
  }
  return samples;
}

export function availabilityFigure(samples: ProbeSamples, expectedAppointments: number): Figure {
  const p99 = percentile(samples.latenciesMs, 99);
  const ok = samples.statuses.filter((s) => s === 200).length;
  return limitFigure(
    { id: 'availability', what: AVAILABILITY_WHAT, unit: 'ms p99', max: 500, target: 'p99 ≤ 500 ms' },
    p99,
    null,
    { 'every probe answered 200': samples.statuses.length > 0 && ok === samples.statuses.length },
    {
      probes: samples.statuses.length,
      statuses: tally(samples.statuses),
      p50Ms: round(percentile(samples.latenciesMs, 50)),
      maxMs: round(Math.max(...samples.latenciesMs, 0)),
      timeoutMs: TIMEOUT_MS,
      expectedAppointments,
      lastAnswerAppointments: samples.lastCount,
    },
  );
}
