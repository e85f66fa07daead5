import { request } from './http.js';
import { sleep } from './log.js';

/**
 * Waits until the service has worked off what an earlier phase left queued
 * (a flood's clients are gone, but the gateway still computes their
 * answers): settled when four cheap requests at once ({ __typename }) each
 * answer within `quickMs`, three times in a row. Gives up at `deadline`.
 * Returns how long it waited and whether it settled.
 */
export async function settle(baseUrl: string, deadline: number, quickMs = 100): Promise<{ waitedMs: number; settled: boolean }> {
  const started = Date.now();
  let quickRounds = 0;
  while (Date.now() < deadline) {
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        request(baseUrl, 'POST', '/graphql', { body: { query: '{ __typename }' }, timeoutMs: Math.max(500, deadline - Date.now()) }),
      ),
    );
    quickRounds = answers.every((a) => a.status === 200 && a.ms <= quickMs) ? quickRounds + 1 : 0;
    if (quickRounds >= 3) return { waitedMs: Date.now() - started, settled: true };
    await sleep(100);
  }
  return { waitedMs: Date.now() - started, settled: false };
}

/**
 * Waits (bounded) until the worker has caught up with what seeding or a
 * phase queued: no pending work (as `pendingWork` counts it) and no new mail
 * file for a second. Seeding books hundreds of consumers, each with two
 * mails; measuring while the worker renders them would charge that work to
 * the next figures.
 */
export async function waitForWorker(pendingWork: () => Promise<number | null>, mailFiles: () => number, deadline: number): Promise<{ waitedMs: number; quiet: boolean; pending: number | null }> {
  const started = Date.now();
  let lastFiles = -1;
  let pending: number | null = null;
  while (Date.now() < deadline) {
    pending = await pendingWork();
    const files = mailFiles();
    if ((pending === null || pending === 0) && files === lastFiles) return { waitedMs: Date.now() - started, quiet: true, pending };
    lastFiles = files;
    await sleep(1_000);
  }
  return { waitedMs: Date.now() - started, quiet: false, pending };
}
