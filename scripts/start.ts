/**
 * `npm start`: one gateway and one worker, as two child processes. Ctrl-C
 * stops both; if either exits on its own, the other is stopped too.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const tsx = fileURLToPath(new URL('../node_modules/tsx/dist/cli.mjs', import.meta.url));
const entries = { gateway: 'schema/gateway.ts', worker: 'worker/main.ts' } as const;
const children = new Map<string, ChildProcess>();
let stopping = false;

const stopAll = (signal: NodeJS.Signals) => {
  for (const child of children.values()) if (child.exitCode === null) child.kill(signal);
};

for (const [name, entry] of Object.entries(entries)) {
  const child = spawn(process.execPath, [tsx, entry], { stdio: 'inherit', env: process.env });
  children.set(name, child);
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (!stopping) {
      console.error(`${name} exited (${signal ?? code}); stopping the rest`);
      stopping = true;
      process.exitCode = code ?? 1;
      stopAll('SIGTERM');
    }
    if (children.size === 0) process.exit();
  });
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    // Children in the terminal's process group get Ctrl-C themselves; forward for kill/SIGTERM.
    stopAll(signal);
  });
}
