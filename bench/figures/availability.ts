import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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

/**
 * probeAppointments in a process of its own (availability-probe.ts, with the
 * benchmark's loader): measured in the benchmark's process, the probe's
 * answers waited behind the flood's load generator, which reads ~150 MB/s
 * of listings on the same event loop (p50 176 ms there against 29 ms from
 * another process, same flood). `stop()` ends it and answers its samples.
 */
export function probeAppointmentsApart(api: Api, providerRef: string): { stop: () => Promise<ProbeSamples> } {
  const child = fork(fileURLToPath(new URL('./availability-probe.ts', import.meta.url)), [api.baseUrl, api.crmId, api.key, providerRef], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const samples = new Promise<ProbeSamples>((resolve, reject) => {
    child.once('message', (message) => resolve(message as ProbeSamples));
    child.once('exit', (code) => reject(new Error(`the availability probe exited (${code}) without samples`)));
  });
  // Reported by stop(); a probe that died early must not end the benchmark.
  samples.catch(() => undefined);
  return {
    stop: async () => {
      child.send('stop');
      return samples;
    },
  };
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
