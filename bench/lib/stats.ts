/** Nearest-rank percentile of unsorted values; null for no values. */
export function percentile(values: readonly number[], p: number): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export const median = (values: readonly number[]) => percentile(values, 50);

export const round = (value: number | null | undefined, digits = 1): number | null =>
  value === null || value === undefined || !Number.isFinite(value) ? null : Number(value.toFixed(digits));

/** Counts of keys, e.g. HTTP status codes. */
export function tally<K extends string | number>(items: readonly K[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[String(item)] = (counts[String(item)] ?? 0) + 1;
  return counts;
}

/** Runs `task` over `items` with at most `concurrency` at once; stops taking new items once `shouldStop()` says so. */
export async function pool<T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<void>, shouldStop: () => boolean = () => false): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length && !shouldStop()) {
      const item = items[next++]!;
      await task(item);
    }
  });
  await Promise.all(runners);
}
