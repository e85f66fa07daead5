import { PARTICIPATION_STATES, type ParticipationState } from '../../services/participations/participation.entity.js';

/**
 * The spec's table "States and transitions / Participation", copied verbatim
 * as the expectation every transition test checks against: from, to, e-mail sent.
 */
export const SPEC_TRANSITIONS: [ParticipationState, ParticipationState, boolean][] = [
  ['RESERVED', 'BOOKED', true],
  ['REQUESTED', 'BOOKED', true],
  ['REQUESTED', 'CANCELED', true],
  ['BOOKED', 'CANCELED', true],
  ['RESERVED', 'CANCELED', false],
  ['DELETED', 'CANCELED', false],
  ['BOOKED', 'DELETED', false],
];

export const inSpecTable = (from: ParticipationState, to: ParticipationState): boolean => SPEC_TRANSITIONS.some(([f, t]) => f === from && t === to);

/** Every move between two different states that the table does not list. */
export const REFUSED_TRANSITIONS = PARTICIPATION_STATES.flatMap((from) => PARTICIPATION_STATES.map((to) => [from, to] as const)).filter(
  ([from, to]) => from !== to && !inSpecTable(from, to),
);
