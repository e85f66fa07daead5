import { round } from '../lib/stats.js';

/** One figure of issue 10's table, as measured in this run. */
export interface Figure {
  id: string;
  what: string;
  /** The measured number, or null when the phase could not measure it. */
  value: number | null;
  unit: string;
  /** The number the target is about: value ÷ baseline (or the figure's own ratio); null when there is none. */
  ratio: number | null;
  /** What `ratio` is relative to, e.g. "B0". */
  ratioOf: string | null;
  /** The target as text, e.g. "≥ 0.25× B0"; "baseline" for B0 and B1 hot. */
  target: string;
  /** Whether the target (and every check below) is met; null for baselines. */
  met: boolean | null;
  /** Conditions besides the number that the target requires (e.g. "exactly 100 succeed"). */
  checks: Record<string, boolean>;
  details: Record<string, unknown>;
  /** Why the figure could not be measured, or what went wrong on the way. */
  error?: string;
  /** A stretch figure: measured when time is left, not counted among the targets the run must meet. */
  stretch?: boolean;
}

/** The target of a figure the project measures beyond issue 10's table: shown with its ratio, never judged. */
export const NO_TARGET = 'none (extension)';

/** A figure beyond issue 10's table, with its ratio to a baseline of the same run. */
export function extensionFigure(spec: { id: string; what: string; unit: string; baseline: Figure | undefined }, value: number | null, details: Record<string, unknown>): Figure {
  const base = spec.baseline?.value ?? null;
  const ratio = value !== null && base ? value / base : null;
  return { id: spec.id, what: spec.what, value: round(value), unit: spec.unit, ratio: round(ratio, 4), ratioOf: spec.baseline?.id ?? null, target: NO_TARGET, met: null, checks: {}, details };
}

export function baselineFigure(id: string, what: string, value: number | null, unit: string, details: Record<string, unknown>, error?: string): Figure {
  return { id, what, value: round(value), unit, ratio: null, ratioOf: null, target: 'baseline', met: null, checks: {}, details, ...(error ? { error } : {}) };
}

/** A figure whose target is a minimum ratio to a baseline (value ÷ baseline ≥ min), plus checks. */
export function ratioFigure(
  spec: { id: string; what: string; unit: string; baseline: Figure | undefined; min: number },
  value: number | null,
  checks: Record<string, boolean>,
  details: Record<string, unknown>,
  error?: string,
): Figure {
  const base = spec.baseline?.value ?? null;
  const ratio = value !== null && base ? value / base : null;
  const met = ratio !== null && ratio >= spec.min && Object.values(checks).every(Boolean);
  return {
    id: spec.id,
    what: spec.what,
    value: round(value),
    unit: spec.unit,
    ratio: round(ratio, 4),
    ratioOf: spec.baseline?.id ?? null,
    target: `≥ ${spec.min}× ${spec.baseline?.id ?? 'baseline'}`,
    met,
    checks,
    details,
    ...(error ? { error } : {}),
  };
}

/** A figure whose target is a maximum (value ≤ max), plus checks; `ratio` is the figure's own ratio when it has one. */
export function limitFigure(
  spec: { id: string; what: string; unit: string; max: number; target: string; ratioOf?: string },
  value: number | null,
  ratio: number | null,
  checks: Record<string, boolean>,
  details: Record<string, unknown>,
  error?: string,
): Figure {
  const judged = spec.ratioOf ? ratio : value;
  const met = judged !== null && judged <= spec.max && Object.values(checks).every(Boolean);
  return {
    id: spec.id,
    what: spec.what,
    value: round(value),
    unit: spec.unit,
    ratio: round(ratio, 3),
    ratioOf: spec.ratioOf ?? null,
    target: spec.target,
    met,
    checks,
    details,
    ...(error ? { error } : {}),
  };
}

/** A figure that could not be measured at all (phase failed or no time was left). */
export function unmeasured(id: string, what: string, unit: string, target: string, error: string): Figure {
  return { id, what, value: null, unit, ratio: null, ratioOf: null, target, met: target === 'baseline' || target === NO_TARGET ? null : false, checks: {}, details: {}, error };
}
