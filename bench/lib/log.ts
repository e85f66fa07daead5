/** Progress on stderr, prefixed with the seconds since the run started; stdout is kept for the final table. */
const started = Date.now();

export function log(message: string): void {
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${message}\n`);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** The run's time budget: every phase asks how much is left and bounds itself by it. */
export class Budget {
  readonly startedAt = Date.now();
  constructor(private readonly totalMs: number) {}

  get endsAt(): number {
    return this.startedAt + this.totalMs;
  }

  remainingMs(): number {
    return this.endsAt - Date.now();
  }

  elapsedMs(): number {
    return Date.now() - this.startedAt;
  }

  /** An instant `ms` from now, but never past the end of the run less `reserveMs` (kept for shutdown and the report). */
  deadline(ms: number, reserveMs = 0): number {
    return Math.min(Date.now() + ms, this.endsAt - reserveMs);
  }
}

export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));
