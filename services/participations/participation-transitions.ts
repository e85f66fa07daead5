import { DomainError } from '../kernel/errors.js';
import { PARTICIPATION_STATES, type ParticipationState } from './participation.entity.js';

/**
 * The participation state machine of the update-participation operation
 * (spec "States and transitions / Participation"), as data.
 *
 * `sendsMail` is the table's "E-mail sent" column: the notification goes out
 * only if the request's `sendMails` also allows it.
 *
 * Decisions where the spec is silent:
 * - Every move not in the table is refused (409 TRANSITION_NOT_ALLOWED); the
 *   spec lists the allowed moves, so e.g. REQUESTED → DELETED or anything out
 *   of CANCELED is not allowed.
 * - A move to RESERVED or REQUESTED is refused with the spec's reason: a new
 *   participation must be created instead (rule 1).
 * - Setting the state a participation already has is an allowed no-op without
 *   e-mail (`unchanged: true`), also for RESERVED and REQUESTED: CRMs re-send
 *   participations as upserts (onDuplicateRaise=false) and retry after
 *   timeouts, and neither should fail or mail twice. The caller skips the write.
 */

export interface ParticipationTransition {
  from: ParticipationState;
  to: ParticipationState;
  sendsMail: boolean;
}

export const PARTICIPATION_TRANSITIONS: readonly ParticipationTransition[] = [
  { from: 'RESERVED', to: 'BOOKED', sendsMail: true },
  { from: 'REQUESTED', to: 'BOOKED', sendsMail: true },
  { from: 'REQUESTED', to: 'CANCELED', sendsMail: true },
  { from: 'BOOKED', to: 'CANCELED', sendsMail: true },
  { from: 'RESERVED', to: 'CANCELED', sendsMail: false },
  { from: 'DELETED', to: 'CANCELED', sendsMail: false },
  { from: 'BOOKED', to: 'DELETED', sendsMail: false },
];

/** States that only a new participation can have. */
const CREATION_ONLY_STATES: readonly ParticipationState[] = ['RESERVED', 'REQUESTED'];

export type TransitionVerdict =
  | { allowed: true; sendsMail: boolean; unchanged: boolean }
  | { allowed: false; reason: string };

const isState = (value: unknown): value is ParticipationState =>
  typeof value === 'string' && (PARTICIPATION_STATES as readonly string[]).includes(value);

/** Whether a participation may move from one state to another, and whether the table sends an e-mail for it. */
export function transitionOf(from: ParticipationState, to: ParticipationState): TransitionVerdict {
  if (!isState(from)) return { allowed: false, reason: `Unknown participation state: ${String(from)}` };
  if (!isState(to)) return { allowed: false, reason: `Unknown participation state: ${String(to)}` };
  if (from === to) return { allowed: true, sendsMail: false, unchanged: true };
  const row = PARTICIPATION_TRANSITIONS.find((t) => t.from === from && t.to === to);
  if (row) return { allowed: true, sendsMail: row.sendsMail, unchanged: false };
  const refusal = `Participation cannot change from ${from} to ${to}`;
  if (CREATION_ONLY_STATES.includes(to)) {
    return { allowed: false, reason: `${refusal}: a new participation must be created instead` };
  }
  const targets = PARTICIPATION_TRANSITIONS.filter((t) => t.from === from).map((t) => t.to);
  return { allowed: false, reason: `${refusal} (allowed from ${from}: ${targets.length ? targets.join(', ') : 'none'})` };
}

/** Returns the allowed transition or throws TRANSITION_NOT_ALLOWED (409) with the reason. */
export function assertTransition(from: ParticipationState, to: ParticipationState): { sendsMail: boolean; unchanged: boolean } {
  const verdict = transitionOf(from, to);
  if (!verdict.allowed) throw new DomainError('TRANSITION_NOT_ALLOWED', verdict.reason);
  return { sendsMail: verdict.sendsMail, unchanged: verdict.unchanged };
}
