import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { round } from './stats.js';

/**
 * How busy the benchmark process itself was during a phase: its CPU share and
 * its event-loop delay. Timestamps taken by a busy client come late, so a
 * high delay here means part of a measured latency is the client's.
 */
export function watchClientLoad(): () => { cpuPercent: number | null; eventLoopDelayP99Ms: number | null } {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  return () => {
    delay.disable();
    const used = process.cpuUsage(cpu);
    const wallMs = performance.now() - started;
    return {
      cpuPercent: round(((used.user + used.system) / 1000 / wallMs) * 100),
      eventLoopDelayP99Ms: delay.count ? round(delay.percentile(99) / 1e6) : null,
    };
  };
}
