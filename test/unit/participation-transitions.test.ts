import { describe, expect, it } from 'vitest';
import { DomainError } from '../../services/kernel/errors.js';
import { PARTICIPATION_STATES, type ParticipationState } from '../../services/participations/participation.entity.js';
import {
  assertTransition,
  PARTICIPATION_TRANSITIONS,
  transitionOf,
} from '../../services/participations/participation-transitions.js';
import { inSpecTable, SPEC_TRANSITIONS } from '../support/spec-transitions.js';


const ALL_PAIRS = PARTICIPATION_STATES.flatMap((from) => PARTICIPATION_STATES.map((to) => [from, to] as const));

const REFUSED_PAIRS = ALL_PAIRS.filter(([from, to]) => from !== to && !inSpecTable(from, to));

describe('the transition table', () => {
  it('holds exactly the rows of the spec', () => {
    expect(PARTICIPATION_TRANSITIONS.map((t) => [t.from, t.to, t.sendsMail])).toEqual(SPEC_TRANSITIONS);
  });

  it('covers the 5×5 matrix: 7 allowed moves, 5 no-ops, 13 refusals', () => {
    expect(ALL_PAIRS).toHaveLength(25);
    expect(REFUSED_PAIRS).toHaveLength(13);
  });

  it.each(SPEC_TRANSITIONS)('%s → %s is allowed, e-mail: %s', (from, to, sendsMail) => {
    expect(transitionOf(from, to)).toEqual({ allowed: true, sendsMail, unchanged: false });
    expect(assertTransition(from, to)).toEqual({ sendsMail, unchanged: false });
  });
});

describe('refused moves', () => {
  it.each(REFUSED_PAIRS)('%s → %s is refused with a message naming both states', (from, to) => {
    const verdict = transitionOf(from, to);
    expect(verdict.allowed).toBe(false);
    if (verdict.allowed) return;
    expect(verdict.reason).toMatch(new RegExp(`^Participation cannot change from ${from} to ${to}\\b`));

    let thrown: unknown;
    try {
      assertTransition(from, to);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(DomainError);
    expect((thrown as DomainError).code).toBe('TRANSITION_NOT_ALLOWED');
    expect((thrown as DomainError).status).toBe(409);
    expect((thrown as DomainError).message).toBe(verdict.reason);
  });

  it.each(REFUSED_PAIRS.filter(([, to]) => to === 'RESERVED' || to === 'REQUESTED'))(
    '%s → %s says a new participation must be created',
    (from, to) => {
      expect(transitionOf(from, to)).toEqual({
        allowed: false,
        reason: `Participation cannot change from ${from} to ${to}: a new participation must be created instead`,
      });
    },
  );

  it('other refusals list what is allowed from the state', () => {
    expect(transitionOf('BOOKED', 'REQUESTED')).toEqual({
      allowed: false,
      reason: 'Participation cannot change from BOOKED to REQUESTED: a new participation must be created instead',
    });
    expect(transitionOf('CANCELED', 'BOOKED')).toEqual({
      allowed: false,
      reason: 'Participation cannot change from CANCELED to BOOKED (allowed from CANCELED: none)',
    });
    expect(transitionOf('REQUESTED', 'DELETED')).toEqual({
      allowed: false,
      reason: 'Participation cannot change from REQUESTED to DELETED (allowed from REQUESTED: BOOKED, CANCELED)',
    });
    expect(transitionOf('DELETED', 'BOOKED')).toEqual({
      allowed: false,
      reason: 'Participation cannot change from DELETED to BOOKED (allowed from DELETED: CANCELED)',
    });
  });

  it('nothing leaves CANCELED', () => {
    for (const to of PARTICIPATION_STATES.filter((state) => state !== 'CANCELED')) {
      expect(transitionOf('CANCELED', to).allowed).toBe(false);
    }
  });

  it('the explicitly refused pairs of the brief', () => {
    for (const [from, to] of [
      ['BOOKED', 'REQUESTED'],
      ['BOOKED', 'RESERVED'],
      ['REQUESTED', 'RESERVED'],
      ['RESERVED', 'REQUESTED'],
      ['CANCELED', 'BOOKED'],
      ['DELETED', 'BOOKED'],
      ['RESERVED', 'DELETED'],
      ['CANCELED', 'DELETED'],
    ] as const) {
      expect(() => assertTransition(from, to)).toThrow(`Participation cannot change from ${from} to ${to}`);
    }
  });
});

describe('same state', () => {
  it.each(PARTICIPATION_STATES.map((state) => [state]))('%s → %s is an allowed no-op without e-mail', (state) => {
    expect(transitionOf(state, state)).toEqual({ allowed: true, sendsMail: false, unchanged: true });
    expect(assertTransition(state, state)).toEqual({ sendsMail: false, unchanged: true });
  });
});

describe('unknown states', () => {
  it.each([
    ['PENDING', 'BOOKED'],
    ['BOOKED', 'CANCELLED'],
    ['booked', 'CANCELED'],
    ['', 'BOOKED'],
  ])('%j → %j is refused, not a crash', (from, to) => {
    const verdict = transitionOf(from as ParticipationState, to as ParticipationState);
    expect(verdict.allowed).toBe(false);
    if (!verdict.allowed) expect(verdict.reason).toMatch(/^Unknown participation state: /);
    expect(() => assertTransition(from as ParticipationState, to as ParticipationState)).toThrow(DomainError);
  });

  it('undefined and null are refused too', () => {
    expect(transitionOf(undefined as unknown as ParticipationState, 'BOOKED')).toEqual({
      allowed: false,
      reason: 'Unknown participation state: undefined',
    });
    expect(transitionOf('BOOKED', null as unknown as ParticipationState).allowed).toBe(false);
  });
});
