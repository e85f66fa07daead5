import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { accepts } from './redis-process.js';

/** A server binary a test runs as its child, listening on its own port, with its work directory. */
export interface ServerProcess {
  /** Its stderr and log file so far (for failure messages). */
  output(): string;
  /** Stops it with `signal` (waiting for the exit) and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Spawns `binary` and waits (10 s at most) until it accepts connections on
 * `port`; fails with its output when it exits first or never listens.
 */
export async function startServerProcess(options: {
  name: string;
  binary: string;
  args: string[];
  port: number;
  dir: string;
  logFile: string;
  stopSignal: NodeJS.Signals;
}): Promise<ServerProcess> {
  const { name, port, dir } = options;
  const child: ChildProcess = spawn(options.binary, options.args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const output = () => {
    try {
      return stderr + readFileSync(options.logFile, 'utf8');
    } catch {
      return stderr;
    }
  };
  const until = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${output()}`);
    if (Date.now() > until) throw new Error(`${name} did not listen on ${port}: ${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill(options.stopSignal);
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
