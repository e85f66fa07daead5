/** How the supervisor of `npm start` treats a process that exits while nothing asked it to. */
export const RESTART_POLICY = {
  /** A process that lived this long started fine; its death is not "at once". */
  stableAfterMs: 10_000,
  /** Deaths at once in a row (of one process) after which everything stops. */
  maxQuickDeaths: 5,
  firstBackOffMs: 250,
  maxBackOffMs: 5_000,
};

export type RestartDecision = { quickDeaths: number } & ({ action: 'restart'; delayMs: number } | { action: 'give-up' });

/**
 * The decision after a process died having lived `livedMs`, given how many of
 * its deaths in a row came at once before: restart after a back-off that
 * doubles with each death at once, or give up when it keeps dying at once.
 */
export function afterUnexpectedExit(quickDeathsBefore: number, livedMs: number, policy = RESTART_POLICY): RestartDecision {
  const quickDeaths = livedMs < policy.stableAfterMs ? quickDeathsBefore + 1 : 1;
  if (quickDeaths >= policy.maxQuickDeaths) return { quickDeaths, action: 'give-up' };
  return { quickDeaths, action: 'restart', delayMs: Math.min(policy.firstBackOffMs * 2 ** (quickDeaths - 1), policy.maxBackOffMs) };
}
