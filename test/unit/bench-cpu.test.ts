import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cpuBudget, cpuPerUnit, type CpuUse, describeCpuBudget, startCpuMeter, withCatchUp } from '../../bench/lib/cpu.js';

const use: CpuUse = {
  wallSeconds: 10,
  cores: 2,
  seconds: { gateways: 8, postgres: 6, worker: 1.5, redis: 0.5, benchmark: 1.5, other: 0.5 },
};

describe('the benchmark CPU accounting', () => {
  it('divides each user’s CPU and the total by the units of work, in ms', () => {
    expect(cpuPerUnit(use, 1000)).toEqual({ gateways: 8, postgres: 6, worker: 1.5, redis: 0.5, benchmark: 1.5, other: 0.5, total: 18 });
    expect(cpuPerUnit(use, 0).total).toBeNull();
  });

  it('says what the target rate leaves per unit and what PostgreSQL alone would allow', () => {
    const budget = cpuBudget(use, 1000, 'pair', 400)!;
    // 2 cores = 2,000 ms of CPU a second; at 400/s that is 5 ms per unit.
    expect(budget.targetAllowsMsPerUnit).toBe(5);
    // PostgreSQL spends 6 ms per unit: with both cores to itself, 2,000 / 6 ≈ 333 units a second.
    expect(budget.postgresAloneAtMostPerSecond).toBe(333);
    expect(describeCpuBudget(budget)).toBe(
      "CPU per pair (ms): gateways 8, postgres 6, worker 1.5, redis 0.5, benchmark 1.5, other 0.5 = 18; at the target rate the 2 cores allow 5 ms; PostgreSQL's share alone would allow at most 333/s",
    );
  });

  it('adds the work left for afterwards (the worker catching up) per unit of the phase', () => {
    const catchUp: CpuUse = { wallSeconds: 5, cores: 2, seconds: { gateways: 0.01, postgres: 2, worker: 4, redis: 0.5, benchmark: 0.02, other: 0.1 } };
    const budget = withCatchUp(cpuBudget(use, 1000, 'pair', 400)!, catchUp);
    expect(budget.catchUpMsPerUnit).toMatchObject({ worker: 4, postgres: 2, total: 6.63 });
    // Users under 0.05 ms per unit are left out of the line.
    expect(describeCpuBudget(budget)).toMatch(/; afterwards, until the worker caught up: postgres 2, worker 4, redis 0.5, other 0.1 = 6.63$/);
    expect(withCatchUp(budget, null)).toBe(budget);
  });

  it('has nothing to say without a measurement, units or a baseline', () => {
    expect(cpuBudget(null, 1000, 'pair', 400)).toBeNull();
    expect(cpuBudget(use, 0, 'pair', 400)).toBeNull();
    expect(cpuBudget(use, 1000, 'pair', null)!.targetAllowsMsPerUnit).toBeNull();
  });

  it.runIf(existsSync('/proc/stat'))('counts its own process as the benchmark’s and every user at zero or more', () => {
    const meter = startCpuMeter(undefined);
    const until = process.cpuUsage().user + 50_000;
    while (process.cpuUsage().user < until) Math.sqrt(Math.random());
    const measured = meter.stop()!;
    expect(measured.seconds.benchmark).toBeGreaterThan(0);
    for (const seconds of Object.values(measured.seconds)) expect(seconds).toBeGreaterThanOrEqual(0);
    expect(measured.cores).toBeGreaterThan(0);
  });
});
