import { describe, expect, it } from 'vitest';
import { afterUnexpectedExit, RESTART_POLICY } from '../../scripts/restart-policy.js';

/** The decisions for a process that dies `livedMs` after each start, death after death. */
function decisions(lived: number[]) {
  let quickDeaths = 0;
  return lived.map((livedMs) => {
    const decision = afterUnexpectedExit(quickDeaths, livedMs);
    quickDeaths = decision.quickDeaths;
    return decision.action === 'restart' ? decision.delayMs : 'give-up';
  });
}

describe('restart policy of npm start', () => {
  it('restarts a process that dies at once after 250 ms, doubling, and gives up at the fifth death in a row', () => {
    expect(decisions([100, 100, 100, 100, 100])).toEqual([250, 500, 1000, 2000, 'give-up']);
  });

  it('starts counting again after a process lived 10 s', () => {
    expect(decisions([100, 100, 100, 100, 10_000, 100, 100, 100, 100])).toEqual([250, 500, 1000, 2000, 250, 500, 1000, 2000, 'give-up']);
  });

  it('restarts a process that ran a while quickly, however often it dies', () => {
    expect(decisions(Array.from({ length: 20 }, () => 60_000))).toEqual(Array.from({ length: 20 }, () => 250));
  });

  it('caps the back-off', () => {
    const patient = { ...RESTART_POLICY, maxQuickDeaths: 100 };
    let quickDeaths = 0;
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) {
      const decision = afterUnexpectedExit(quickDeaths, 0, patient);
      quickDeaths = decision.quickDeaths;
      if (decision.action === 'restart') delays.push(decision.delayMs);
    }
    expect(delays).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000, 5000, 5000]);
  });
});
