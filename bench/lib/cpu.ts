import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { round } from './stats.js';

/**
 * Where a phase's CPU went, read from Linux's /proc: the service's gateways
 * and worker (the process group `npm start` runs in), PostgreSQL and Redis
 * (when they run on this machine), the benchmark itself (its load
 * generator), and the rest of the machine's busy time (kernel threads,
 * interrupts, other daemons). The figures say how fast; this says what a
 * booking costs, and so whether a target fits on this machine at all.
 * Null on systems without /proc.
 */

/** The processes a phase's CPU is attributed to, in the order they are printed. */
export const CPU_USERS = ['gateways', 'postgres', 'worker', 'redis', 'benchmark', 'other'] as const;
export type CpuUser = (typeof CPU_USERS)[number];

/** CPU seconds of each user over a measured window, and the window. */
export interface CpuUse {
  wallSeconds: number;
  cores: number;
  seconds: Record<CpuUser, number>;
}

interface Sample {
  at: number;
  /** Busy ticks of the whole machine (all of /proc/stat's first line but idle and iowait). */
  machineTicks: number;
  /** Ticks (user + system) of every process seen, by pid, with who it counts for. */
  processes: Map<number, { user: Exclude<CpuUser, 'other'> | null; ticks: number }>;
}

let ticksPerSecond: number | null = null;
function clockTicks(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** Who a process counts for: the service's own processes by group, the stores by name, the benchmark by pid. */
function userOf(pid: number, command: string, group: number, serviceGroup: number | undefined): Exclude<CpuUser, 'other'> | null {
  if (pid === process.pid) return 'benchmark';
  if (command === 'postgres') return 'postgres';
  if (command.startsWith('redis-server')) return 'redis';
  if (serviceGroup === undefined || group !== serviceGroup) return null;
  let cmdline = '';
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return null;
  }
  // npm and the start script (the cluster's primary) are the gateways' share: they accept and hand on connections.
  return cmdline.includes('worker/main') ? 'worker' : 'gateways';
}

function sample(serviceGroup: number | undefined): Sample {
  const [cpuLine] = readFileSync('/proc/stat', 'utf8').split('\n');
  const fields = cpuLine!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already counted in user).
  const machineTicks = fields.slice(0, 8).reduce((sum, value, i) => (i === 3 || i === 4 ? sum : sum + value), 0);
  const processes: Sample['processes'] = new Map();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    const command = stat.slice(open + 1, close);
    // After "(comm) ": state ppid pgrp … utime (index 11) stime (12).
    const rest = stat.slice(close + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]);
    processes.set(pid, { user: userOf(pid, command, Number(rest[2]), serviceGroup), ticks });
  }
  return { at: performance.now(), machineTicks, processes };
}

/**
 * Starts measuring; `stop()` answers the CPU each user spent since, or null
 * where /proc is missing. `serviceGroup` is the process group of the
 * service (the pid of the `npm start` the benchmark spawned).
 */
export function startCpuMeter(serviceGroup: number | undefined): { stop(): CpuUse | null } {
  if (!existsSync('/proc/stat')) return { stop: () => null };
  const before = sample(serviceGroup);
  return {
    stop() {
      const after = sample(serviceGroup);
      const hz = clockTicks();
      const seconds = Object.fromEntries(CPU_USERS.map((user) => [user, 0])) as Record<CpuUser, number>;
      let attributed = 0;
      for (const [pid, now] of after.processes) {
        if (!now.user) continue;
        // A process started during the window counts from zero.
        const spent = (now.ticks - (before.processes.get(pid)?.ticks ?? 0)) / hz;
        if (spent <= 0) continue;
        seconds[now.user] += spent;
        attributed += spent;
      }
      seconds.other = Math.max(0, (after.machineTicks - before.machineTicks) / hz - attributed);
      return { wallSeconds: (after.at - before.at) / 1000, cores: availableParallelism(), seconds };
    },
  };
}

/** CPU per unit of work (ms) of each user and in all, e.g. per booking. */
export function cpuPerUnit(use: CpuUse, units: number): Record<CpuUser | 'total', number | null> {
  const total = CPU_USERS.reduce((sum, user) => sum + use.seconds[user], 0);
  const per = (seconds: number) => (units > 0 ? round((seconds * 1000) / units, 2) : null);
  return { ...(Object.fromEntries(CPU_USERS.map((user) => [user, per(use.seconds[user])])) as Record<CpuUser, number | null>), total: per(total) };
}

/**
 * What a rate costs and what a target allows: CPU per unit by user, the
 * machine's CPU per unit the target rate leaves (all cores ÷ rate), and the
 * highest rate PostgreSQL's share alone would allow if nothing else needed
 * a core.
 */
export function cpuBudget(use: CpuUse | null, units: number, per: string, targetPerSecond: number | null) {
  if (!use || units <= 0) return null;
  const perUnit = cpuPerUnit(use, units);
  const coreMs = use.cores * 1000;
  return {
    per,
    units,
    cores: use.cores,
    wallSeconds: round(use.wallSeconds, 2),
    msPerUnit: perUnit,
    targetAllowsMsPerUnit: targetPerSecond ? round(coreMs / targetPerSecond, 2) : null,
    postgresAloneAtMostPerSecond: perUnit.postgres ? round(coreMs / perUnit.postgres, 0) : null,
  };
}

export type CpuBudget = NonNullable<ReturnType<typeof cpuBudget>> & {
  /** CPU per unit after the phase, until the worker had sent what it queued (mails wait MAIL_DELAY_MS and yield to bookings). */
  catchUpMsPerUnit?: ReturnType<typeof cpuPerUnit>;
};

/** Adds what the machine spent after the phase, until the worker caught up, to the phase's budget. */
export const withCatchUp = (budget: CpuBudget, catchUp: CpuUse | null): CpuBudget =>
  catchUp ? { ...budget, catchUpMsPerUnit: cpuPerUnit(catchUp, budget.units) } : budget;

/** One line for the progress log and the table's notes: "CPU per pair (ms): gateways 6.8, postgres 5.3, … = 15.9; at the target rate …". */
export function describeCpuBudget(budget: CpuBudget): string {
  const parts = CPU_USERS.map((user) => `${user} ${budget.msPerUnit[user] ?? '?'}`).join(', ');
  const allows = budget.targetAllowsMsPerUnit === null ? '' : `; at the target rate the ${budget.cores} cores allow ${budget.targetAllowsMsPerUnit} ms`;
  const ceiling = budget.postgresAloneAtMostPerSecond === null ? '' : `; PostgreSQL's share alone would allow at most ${budget.postgresAloneAtMostPerSecond}/s`;
  const after = budget.catchUpMsPerUnit;
  // Users with next to nothing afterwards (the benchmark, the gateways) are left out of that part.
  const afterParts = after ? CPU_USERS.filter((user) => (after[user] ?? 0) >= 0.05).map((user) => `${user} ${after[user]}`) : [];
  const catchUp = after ? `; afterwards, until the worker caught up: ${afterParts.join(', ')} = ${after.total}` : '';
  return `CPU per ${budget.per} (ms): ${parts} = ${budget.msPerUnit.total ?? '?'}${allows}${ceiling}${catchUp}`;
}
