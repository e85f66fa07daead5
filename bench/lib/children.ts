import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { log, sleep } from './log.js';

/**
 * Child processes of the benchmark. Each runs in a process group of its own
 * (detached), so stopping it also stops what it started (npm → start script
 * → gateways and worker), and a Ctrl-C in the terminal reaches only the
 * benchmark, which then stops them in order. Whatever is still alive when the
 * benchmark exits, by any path, gets SIGKILL.
 */
const running = new Set<ChildProcess>();

export function spawnGroup(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** Whether any process of the child's group is still alive (the leader may be gone while its children live on). */
export function groupAlive(child: ChildProcess): boolean {
  if (child.pid === undefined) return false;
  try {
    process.kill(-child.pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone already
  }
}

/** SIGTERM to the group, then SIGKILL if anything of it is still alive after `graceMs`. */
export async function stopGroup(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (!groupAlive(child)) {
    running.delete(child);
    return;
  }
  signalGroup(child, 'SIGTERM');
  const until = Date.now() + graceMs;
  while (groupAlive(child) && Date.now() < until) await sleep(100);
  if (groupAlive(child)) {
    log(`process group ${child.pid} still alive after ${graceMs} ms: SIGKILL`);
    signalGroup(child, 'SIGKILL');
    await sleep(200);
  }
  running.delete(child);
}

export async function stopAll(graceMs?: number): Promise<void> {
  await Promise.all([...running].map((child) => stopGroup(child, graceMs)));
}

let installed = false;
let interruptedBy: NodeJS.Signals | null = null;

/** The signal that interrupted the run, if one did (a run stopped by hand is not reported). */
export const interrupted = () => interruptedBy;

/**
 * Stops every child group on every way out: a normal end (the caller awaits
 * stopAll), Ctrl-C / SIGTERM / SIGHUP (graceful, then exit 130/143), an
 * uncaught error, and as a last resort a synchronous SIGKILL on exit.
 */
export function installCleanup(): void {
  if (installed) return;
  installed = true;
  let stopping = 0;
  const onSignal = (signal: NodeJS.Signals, code: number) => {
    // tsx relays the terminal's Ctrl-C to this process, which also gets it itself: a repeat within a second is the same one.
    if (stopping && Date.now() - stopping < 1_000) return;
    if (stopping) {
      log(`${signal} again: killing child processes now`);
      for (const child of running) signalGroup(child, 'SIGKILL');
      process.exit(code);
    }
    stopping = Date.now();
    interruptedBy = signal;
    log(`${signal}: stopping child processes`);
    void stopAll(5_000).finally(() => process.exit(code));
  };
  process.on('SIGINT', () => onSignal('SIGINT', 130));
  process.on('SIGTERM', () => onSignal('SIGTERM', 143));
  process.on('SIGHUP', () => onSignal('SIGHUP', 129));
  process.on('exit', () => {
    for (const child of running) signalGroup(child, 'SIGKILL');
  });
}

/** Runs a command to its end and returns its output; kills its group after `timeoutMs`. */
export function runToEnd(
  command: string,
  args: string[],
  options: SpawnOptions & { timeoutMs: number },
): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawnGroup(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      void stopGroup(child, 2_000);
    }, options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}
