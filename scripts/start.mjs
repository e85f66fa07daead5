// @ts-check
/**
 * `npm start`: builds dist/ when it is missing or older than the sources, then
 * runs the compiled supervisor (dist/scripts/supervisor.js) in this process
 * with plain node: GATEWAY_PROCESSES gateways sharing PORT and one worker.
 */
import { ensureBuilt } from './build.mjs';

ensureBuilt();
await import('../dist/scripts/supervisor.js');
