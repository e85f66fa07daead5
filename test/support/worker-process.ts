import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface WorkerProcess {
  pid: number;
  child: ChildProcess;
  /** stdout and stderr so far (JSON log lines). */
  output(): string;
  /** Resolves with the exit code (or the signal name) once the process ended. */
  exited: Promise<number | string>;
  kill(signal: NodeJS.Signals): void;
}

/**
 * Runs `worker/main.ts` as a real child process (`node --import tsx`, one
 * process, so a signal reaches the worker itself) with the given environment
 * on top of this one, and waits until it logs "worker started".
 */
export async function startWorkerProcess(env: Record<string, string>, readyTimeoutMs = 30_000): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'worker/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const until = Date.now() + readyTimeoutMs;
  while (!output.includes('"worker started"')) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`worker exited before it started:\n${output}`);
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`worker did not start within ${readyTimeoutMs} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    pid: child.pid!,
    child,
    output: () => output,
    exited,
    kill: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}
