import { DelayedError, type Job } from 'bullmq';
import { type ContextRoot, createContext } from '../services/kernel/context.js';
import type { HoldExpiryJob } from '../services/kernel/jobs.js';
import { expireHold, findExpiredHolds } from '../services/participations/hold.service.js';

/** Removes one hold when its time is up; a job that fires early is put back until then. */
export function holdExpiryProcessor(root: ContextRoot) {
  return async (job: Job<HoldExpiryJob>, token?: string) => {
    const ctx = createContext(root, { actor: { kind: 'system', name: 'hold-expiry' }, requestId: job.id, log: { jobId: job.id, queue: job.queueName } });
    const outcome = await expireHold(ctx, job.data.participationId);
    if (typeof outcome === 'object') {
      await job.moveToDelayed(Date.now() + outcome.notDueForMs, token);
      throw new DelayedError();
    }
    return outcome;
  };
}

/**
 * Expires every hold whose time is up, whether or not its job still exists
 * (e.g. Redis lost it). Each hold in its own transaction; one that fails is
 * logged and left to the next sweep, the others still go.
 */
export async function sweepExpiredHolds(root: ContextRoot): Promise<number> {
  const ctx = createContext(root, { actor: { kind: 'system', name: 'hold-sweep' } });
  let removed = 0;
  for (const id of await findExpiredHolds(ctx)) {
    try {
      if ((await expireHold(createContext(root, { actor: { kind: 'system', name: 'hold-sweep' } }), id)) === 'removed') removed++;
    } catch (error) {
      root.logger.warn('could not expire a hold', { participationId: id, error: error instanceof Error ? error.message : String(error) });
    }
  }
  if (removed) root.logger.info('sweep removed expired holds', { removed });
  return removed;
}
