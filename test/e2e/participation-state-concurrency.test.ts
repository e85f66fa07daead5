import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transitionOf } from '../../services/participations/participation-transitions.js';
import type { ParticipationState } from '../../services/participations/participation.entity.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { enc } from '../support/offerings-fixtures.js';
import { addParticipation, createAppointment, mailRowsOfParticipation, setupScheduling, type SchedulingFixture, sql } from '../support/scheduling-fixtures.js';

const UPDATE_STATE = `mutation($p: String!, $r: String!, $s: ParticipationState!) {
  updateParticipationState(providerReference: $p, reference: $r, state: $s) { state } }`;

interface StateEvent {
  change: string;
  state: ParticipationState | null;
  previousState: ParticipationState | null;
}

/**
 * Issue 11, item 12: every writer of a participation's state locks the
 * appointment, re-reads the participation under the lock and applies the
 * transition table to what it reads then.
 */
describe('participation state changes in parallel', () => {
  let app: TestApp;
  let f: SchedulingFixture;

  beforeAll(async () => {
    app = await startTestApp();
    f = await setupScheduling(app);
  });
  afterAll(async () => app?.close());

  /** Half over REST, half over GraphQL, all at once; returns each answer's status and error code. */
  async function inParallel(reference: string, states: ParticipationState[]): Promise<{ ok: boolean; code: string | undefined }[]> {
    return Promise.all(
      states.map(async (state, i) => {
        if (i % 2 === 0) {
          const res = await f.api.post(`${f.base}/participations/${enc(reference)}`, { state });
          return { ok: res.status === 200, code: res.body?.errors?.[0]?.errorCode };
        }
        const res = await f.api.graphql(UPDATE_STATE, { p: f.providerRef, r: reference, s: state });
        const error = res.body.errors?.[0];
        return { ok: !error && res.body.data?.updateParticipationState?.state !== undefined, code: error?.extensions?.code };
      }),
    );
  }

  const stateEvents = async (reference: string) =>
    (
      await sql<{ payload: StateEvent }>(
        app,
        `select o.payload from outbox_message o join participation p on p.id::text = o.payload->>'participationUuid'
          where o.topic = 'appointment-changed' and o.payload->>'change' = 'PARTICIPATION_STATE_CHANGED' and p.crm_id = ? and p.reference = ?
          order by o.id`,
        [f.crmId, reference],
      )
    ).map((row) => row.payload);

  const stateOf = async (reference: string) =>
    (await sql<{ state: string }>(app, 'select state from participation where crm_id = ? and reference = ?', [f.crmId, reference]))[0]!.state;

  it('20 parallel CANCELED requests cancel once and send one cancellation mail', async () => {
    const a = await createAppointment(f, { capacity: 10 });
    const { reference } = await addParticipation(f, a.reference, { state: 'BOOKED', query: 'sendMails=false' });

    const answers = await inParallel(reference, Array<ParticipationState>(20).fill('CANCELED'));
    expect(answers.every((answer) => answer.ok)).toBe(true);
    expect(await stateOf(reference)).toBe('CANCELED');
    const mails = await mailRowsOfParticipation(app, f.crmId, reference);
    expect(mails.map((m) => m.payload.template)).toEqual(['participation-canceled']);
    expect((await stateEvents(reference)).map((e) => [e.previousState, e.state])).toEqual([['BOOKED', 'CANCELED']]);
  });

  it('20 parallel CANCELED and DELETED requests follow the transition table one after the other', async () => {
    for (let round = 0; round < 3; round++) {
      const a = await createAppointment(f, { capacity: 10 });
      const { reference } = await addParticipation(f, a.reference, { state: 'BOOKED', query: 'sendMails=false' });
      const states: ParticipationState[] = Array.from({ length: 20 }, (_, i) => (i % 2 === (round % 2) ? 'CANCELED' : 'DELETED'));

      const answers = await inParallel(reference, states);
      // Each answer is a success or the table's refusal; nothing else (no deadlock, no 500).
      for (const answer of answers) if (!answer.ok) expect(answer.code).toBe('TRANSITION_NOT_ALLOWED');

      // The changes form one chain of allowed moves, starting from BOOKED.
      const events = await stateEvents(reference);
      let current: ParticipationState = 'BOOKED';
      for (const event of events) {
        expect(event.previousState).toBe(current);
        const verdict = transitionOf(current, event.state!);
        expect(verdict.allowed && !verdict.unchanged).toBe(true);
        current = event.state!;
      }
      const final = await stateOf(reference);
      expect(final).toBe(current);
      // A CANCELED always follows a DELETED (DELETED -> CANCELED is allowed, CANCELED -> DELETED is not).
      expect(final).toBe('CANCELED');
      // The mail goes out only for BOOKED -> CANCELED, and only once; DELETED -> CANCELED is silent.
      const mails = await mailRowsOfParticipation(app, f.crmId, reference);
      const bookedToCanceled = events.filter((e) => e.previousState === 'BOOKED' && e.state === 'CANCELED').length;
      expect(bookedToCanceled).toBeLessThanOrEqual(1);
      expect(mails.map((m) => m.payload.template)).toEqual(bookedToCanceled ? ['participation-canceled'] : []);
      // Every refusal is a DELETED that came after a CANCELED: a CANCELED is allowed from BOOKED, DELETED and CANCELED.
      expect(answers.filter((answer, i) => !answer.ok && states[i] === 'CANCELED')).toEqual([]);
    }
  });
});
