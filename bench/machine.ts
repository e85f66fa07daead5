import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  platform: string;
  /** 1-minute load average when the run started and when it ended (other work on the machine skews every number). */
  loadAverage: number[];
}

const loadAtStart = loadavg()[0]!;

export function machine(): Machine {
  const cpu = cpus();
  return {
    cpuModel: cpu[0]?.model.trim() ?? 'unknown',
    cores: cpu.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadAverage: [Number(loadAtStart.toFixed(2)), Number(loadavg()[0]!.toFixed(2))],
  };
}

/** The commit the run measured, and whether the working tree had changes on top of it. */
export function gitCommit(cwd: string): { commit: string; dirty: boolean } {
  const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    return { commit: git('rev-parse', '--short=10', 'HEAD'), dirty: git('status', '--porcelain', '--untracked-files=no').length > 0 };
  } catch {
    return { commit: 'unknown', dirty: false };
  }
}
