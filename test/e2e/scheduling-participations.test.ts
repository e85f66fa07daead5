import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ParticipationState } from '../../services/participations/participation.entity.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { apiClient, unique } from '../support/http.js';
import { enc } from '../support/offerings-fixtures.js';
import {
  addParticipation,
  createAppointment,
  createCustomer,
  mailRowsOfParticipation,
  setupScheduling,
  type SchedulingFixture,
  sql,
} from '../support/scheduling-fixtures.js';
import { REFUSED_TRANSITIONS, SPEC_TRANSITIONS } from '../support/spec-transitions.js';

const API_INFO = { version: '1' };
const STATES: ParticipationState[] = ['RESERVED', 'REQUESTED', 'BOOKED', 'CANCELED', 'DELETED'];

const TEMPLATE_OF: Partial<Record<ParticipationState, string>> = { BOOKED: 'participation-booked', CANCELED: 'participation-canceled' };
const REFUSED = REFUSED_TRANSITIONS;

describe('scheduling: participations (REST)', () => {
  let app: TestApp;
  let f: SchedulingFixture;
  /** One roomy appointment for the tests that do not test capacity. */
  let roomy: { reference: string; uuid: string };

  beforeAll(async () => {
    app = await startTestApp();
    f = await setupScheduling(app);
    roomy = await createAppointment(f, { capacity: 500 });
  });
  afterAll(async () => app?.close());

  const update = (reference: string, body: Record<string, unknown>, query = '') => f.api.post(`${f.base}/participations/${enc(reference)}${query}`, body);
  const stateOf = async (reference: string) =>
    (await sql<{ state: string }>(app, 'select state from participation where crm_id = ? and reference = ?', [f.crmId, reference]))[0]?.state;

  describe('create', () => {
    it('answers 201 with the wrapped participation; name, email, mobile and note come from the customer', async () => {
      const customerReference = await createCustomer(f, { userName: 'Bea Booker', email: 'bea@example.com', mobile: '+41 79 123 45 67', note: 'prefers mornings' });
      const { res, reference } = await addParticipation(f, roomy.reference, { customerReference, state: 'BOOKED', message: 'Welcome', query: 'sendMails=false' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        'api-info': API_INFO,
        participation: {
          reference,
          appointmentReference: roomy.reference,
          customerReference,
          state: 'BOOKED',
          name: 'Bea Booker',
          email: 'bea@example.com',
          mobile: '+41 79 123 45 67',
          note: 'prefers mornings',
          messages: ['Welcome'],
        },
      });
    });

    it.each(['reference', 'appointmentReference', 'customerReference', 'state'])('names the missing required field %s (400)', async (field) => {
      const body: Record<string, unknown> = { reference: `p-${unique()}`, appointmentReference: roomy.reference, customerReference: await createCustomer(f), state: 'BOOKED' };
      delete body[field];
      const res = await f.api.post(`${f.base}/participations`, body);
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toEqual({ errorCode: 'VALIDATION_FAILED', message: `${field} is required` });
    });

    it('refuses an unknown state, a too long message, an unknown appointment or customer (400)', async () => {
      const customerReference = await createCustomer(f);
      const bad = await addParticipation(f, roomy.reference, { customerReference, state: 'CONFIRMED' });
      expect(bad.res.body.errors[0].message).toBe('state must be one of RESERVED, REQUESTED, BOOKED, CANCELED, DELETED');
      const long = await addParticipation(f, roomy.reference, { customerReference, message: 'x'.repeat(1025) });
      expect(long.res.status).toBe(400);
      expect(long.res.body.errors[0].message).toBe('message must be at most 1024 characters');
      const noAppointment = await addParticipation(f, 'no-such-appointment', { customerReference });
      expect(noAppointment.res.status).toBe(400);
      expect(noAppointment.res.body.errors[0].message).toBe('appointmentReference: no appointment no-such-appointment');
      const noCustomer = await addParticipation(f, roomy.reference, { customerReference: 'no-such-customer' });
      expect(noCustomer.res.status).toBe(400);
      expect(noCustomer.res.body.errors[0].message).toBe('customerReference: no customer no-such-customer');
    });

    it('with sendMails (default true) writes the mail of the new state carrying the message; sendMails=false writes none', async () => {
      const booked = await addParticipation(f, roomy.reference, { state: 'BOOKED', message: 'See you on Monday' });
      expect(booked.res.status).toBe(201);
      const bookedMails = await mailRowsOfParticipation(app, f.crmId, booked.reference);
      expect(bookedMails.map((m) => m.payload)).toEqual([
        { template: 'participation-booked', params: { participationId: expect.any(String), appointmentId: roomy.uuid }, message: 'See you on Monday' },
      ]);
      const requested = await addParticipation(f, roomy.reference, { state: 'REQUESTED' });
      expect((await mailRowsOfParticipation(app, f.crmId, requested.reference)).map((m) => m.payload.template)).toEqual(['booking-request-received']);
      for (const state of ['RESERVED', 'CANCELED', 'DELETED']) {
        const quiet = await addParticipation(f, roomy.reference, { state });
        expect(quiet.res.status).toBe(201);
        expect(await mailRowsOfParticipation(app, f.crmId, quiet.reference)).toEqual([]);
      }
      const silent = await addParticipation(f, roomy.reference, { state: 'BOOKED', query: 'sendMails=false' });
      expect(silent.res.status).toBe(201);
      expect(await mailRowsOfParticipation(app, f.crmId, silent.reference)).toEqual([]);
    });

    it('onDuplicateRaise=true refuses an existing reference (409); by default the existing one is updated (200) by the transition table', async () => {
      const customerReference = await createCustomer(f);
      const first = await addParticipation(f, roomy.reference, { customerReference, state: 'REQUESTED', query: 'sendMails=false' });
      expect(first.res.status).toBe(201);
      const again = { reference: first.reference, customerReference };

      const raised = await addParticipation(f, roomy.reference, { ...again, state: 'BOOKED', query: 'onDuplicateRaise=true' });
      expect(raised.res.status).toBe(409);
      expect(raised.res.body.errors[0]).toEqual({ errorCode: 'CONFLICT', message: `Participation ${first.reference} already exists` });
      expect(await stateOf(first.reference)).toBe('REQUESTED');

      const updated = await addParticipation(f, roomy.reference, { ...again, state: 'BOOKED', message: 'confirmed', query: 'onDuplicateRaise=false' });
      expect(updated.res.status).toBe(200);
      expect(updated.res.body.participation).toMatchObject({ reference: first.reference, state: 'BOOKED', messages: ['confirmed'] });
      expect((await mailRowsOfParticipation(app, f.crmId, first.reference)).map((m) => m.payload.template)).toEqual(['participation-booked']);

      // Sent again unchanged: 200, nothing changes, nothing is mailed.
      const repeated = await addParticipation(f, roomy.reference, { ...again, state: 'BOOKED' });
      expect(repeated.res.status).toBe(200);
      expect(await mailRowsOfParticipation(app, f.crmId, first.reference)).toHaveLength(1);

      // A move the table does not allow is refused also on this path.
      const refused = await addParticipation(f, roomy.reference, { ...again, state: 'REQUESTED' });
      expect(refused.res.status).toBe(409);
      expect(refused.res.body.errors[0].errorCode).toBe('TRANSITION_NOT_ALLOWED');

      // The duplicate may not name another appointment or customer.
      const other = await createAppointment(f);
      expect((await addParticipation(f, other.reference, { ...again, state: 'BOOKED' })).res.status).toBe(409);
      expect((await addParticipation(f, roomy.reference, { reference: first.reference, state: 'BOOKED' })).res.status).toBe(409);
      expect(await stateOf(first.reference)).toBe('BOOKED');
    });

    it('refuses a customer who already takes part in the appointment (409)', async () => {
      const customerReference = await createCustomer(f);
      expect((await addParticipation(f, roomy.reference, { customerReference, query: 'sendMails=false' })).res.status).toBe(201);
      const twice = await addParticipation(f, roomy.reference, { customerReference, query: 'sendMails=false' });
      expect(twice.res.status).toBe(409);
      expect(twice.res.body.errors[0].errorCode).toBe('ALREADY_PARTICIPATING');
    });

    it('refuses participations in a cancelled appointment (409)', async () => {
      const a = await createAppointment(f);
      await f.api.delete(`${f.base}/appointments`, { appointmentReference: a.reference });
      const res = await addParticipation(f, a.reference, {});
      expect(res.res.status).toBe(409);
      expect(res.res.body.errors[0].message).toContain('cancelled');
    });
  });

  describe('capacity', () => {
    it('refuses a place in a full appointment (409); ignoreCapacity adds it anyway; non-occupying states need no place', async () => {
      const a = await createAppointment(f, { capacity: 2 });
      expect((await addParticipation(f, a.reference, { state: 'BOOKED', query: 'sendMails=false' })).res.status).toBe(201);
      expect((await addParticipation(f, a.reference, { state: 'REQUESTED', query: 'sendMails=false' })).res.status).toBe(201);
      for (const state of ['BOOKED', 'REQUESTED', 'RESERVED']) {
        const full = await addParticipation(f, a.reference, { state });
        expect(full.res.status).toBe(409);
        expect(full.res.body.errors[0]).toEqual({ errorCode: 'CAPACITY_EXHAUSTED', message: `Appointment ${a.reference} is full (capacity 2)` });
        expect(await stateOf(full.reference)).toBeUndefined();
      }
      expect((await addParticipation(f, a.reference, { state: 'CANCELED' })).res.status).toBe(201);
      const forced = await addParticipation(f, a.reference, { state: 'BOOKED', query: 'ignoreCapacity=true&sendMails=false' });
      expect(forced.res.status).toBe(201);
      const booked = await sql(app, `select id from participation where appointment_id = ? and state in ('BOOKED', 'REQUESTED')`, [a.uuid]);
      expect(booked).toHaveLength(3);
    });

    it('an appointment created without capacity (0) takes nobody unless ignoreCapacity', async () => {
      const a = await createAppointment(f, { capacity: undefined });
      expect(a.capacity).toBe(0);
      expect((await addParticipation(f, a.reference, {})).res.status).toBe(409);
      expect((await addParticipation(f, a.reference, { query: 'ignoreCapacity' })).res.status).toBe(201);
    });

    it('a cancelled place is free again', async () => {
      const a = await createAppointment(f, { capacity: 1 });
      const first = await addParticipation(f, a.reference, { state: 'BOOKED', query: 'sendMails=false' });
      expect((await addParticipation(f, a.reference, {})).res.status).toBe(409);
      expect((await update(first.reference, { state: 'CANCELED' }, '?sendMails=false')).status).toBe(200);
      expect((await addParticipation(f, a.reference, {})).res.status).toBe(201);
    });

    it('an expired hold no longer counts; completing it (RESERVED -> BOOKED) needs a free place', async () => {
      try {
        const a = await createAppointment(f, { capacity: 1 });
        const hold = await addParticipation(f, a.reference, { state: 'RESERVED' });
        expect((await addParticipation(f, a.reference, {})).res.status).toBe(409);
        app.clock.set(new Date(Date.now() + 4 * 60_000));
        const other = await addParticipation(f, a.reference, { state: 'BOOKED', query: 'sendMails=false' });
        expect(other.res.status).toBe(201);
        const late = await update(hold.reference, { state: 'BOOKED' });
        expect(late.status).toBe(409);
        expect(late.body.errors[0].errorCode).toBe('CAPACITY_EXHAUSTED');
        expect(await stateOf(hold.reference)).toBe('RESERVED');
        // With the place free again the late completion goes through.
        expect((await update(other.reference, { state: 'CANCELED' }, '?sendMails=false')).status).toBe(200);
        expect((await update(hold.reference, { state: 'BOOKED' })).status).toBe(200);
      } finally {
        app.clock.reset();
      }
    });

    it('never overfills: 30 concurrent creates on two gateways for an appointment of capacity 5 give 5 places and 25 refusals', async () => {
      const second = await startTestApp();
      try {
        const a = await createAppointment(f, { capacity: 5 });
        const customers = await Promise.all(Array.from({ length: 30 }, () => createCustomer(f)));
        const clients = [f.api, apiClient(second.baseUrl, f.key)];
        const results = await Promise.all(
          customers.map((customerReference, i) =>
            clients[i % 2]!.post(`${f.base}/participations?sendMails=false`, {
              reference: `race-${unique()}`,
              appointmentReference: a.reference,
              customerReference,
              state: 'BOOKED',
            }),
          ),
        );
        const statuses = results.map((r) => r.status);
        expect(statuses.filter((s) => s === 201)).toHaveLength(5);
        expect(statuses.filter((s) => s === 409)).toHaveLength(25);
        for (const refused of results.filter((r) => r.status === 409)) expect(refused.body.errors[0].errorCode).toBe('CAPACITY_EXHAUSTED');
        const stored = await sql(app, 'select id from participation where appointment_id = ?', [a.uuid]);
        expect(stored).toHaveLength(5);
        const listed = (await f.api.get(`${f.base}/appointments`)).body.find((x: { reference: string }) => x.reference === a.reference);
        expect(listed.participations).toHaveLength(5);
      } finally {
        await second.close();
      }
    });
  });

  describe('update state: the transition table', () => {
    /** A participation in the given state (created directly in it, without mail). */
    const participationIn = async (state: ParticipationState) => {
      const created = await addParticipation(f, roomy.reference, { state, query: 'sendMails=false' });
      expect(created.res.status).toBe(201);
      return created.reference;
    };

    it.each(SPEC_TRANSITIONS)('%s -> %s is allowed (200); e-mail: %s', async (from, to, mails) => {
      const reference = await participationIn(from);
      const res = await update(reference, { state: to, message: `moved to ${to}` });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ 'api-info': API_INFO, participation: expect.objectContaining({ reference, state: to, messages: [`moved to ${to}`] }) });
      expect(await stateOf(reference)).toBe(to);
      const rows = await mailRowsOfParticipation(app, f.crmId, reference);
      if (mails) {
        expect(rows.map((r) => r.payload)).toEqual([
          { template: TEMPLATE_OF[to], params: { participationId: expect.any(String), appointmentId: roomy.uuid }, message: `moved to ${to}` },
        ]);
      } else {
        expect(rows).toEqual([]);
      }
    });

    it.each(SPEC_TRANSITIONS.filter(([, , mails]) => mails))('%s -> %s with sendMails=false changes the state and writes no mail', async (from, to) => {
      const reference = await participationIn(from);
      const res = await update(reference, { state: to }, '?sendMails=false');
      expect(res.status).toBe(200);
      expect(await stateOf(reference)).toBe(to);
      expect(await mailRowsOfParticipation(app, f.crmId, reference)).toEqual([]);
    });

    it.each(REFUSED)('%s -> %s is refused with 409 naming both states; nothing changes', async (from, to) => {
      const reference = await participationIn(from);
      const res = await update(reference, { state: to });
      expect(res.status).toBe(409);
      expect(res.body.errors[0].errorCode).toBe('TRANSITION_NOT_ALLOWED');
      expect(res.body.errors[0].message).toContain(`Participation cannot change from ${from} to ${to}`);
      if (to === 'RESERVED' || to === 'REQUESTED') expect(res.body.errors[0].message).toContain('a new participation must be created instead');
      expect(await stateOf(reference)).toBe(from);
      expect(await mailRowsOfParticipation(app, f.crmId, reference)).toEqual([]);
    });

    it.each(STATES)('%s -> %s (the same state) is a no-op: 200, no mail', async (state) => {
      const reference = await participationIn(state);
      const res = await update(reference, { state });
      expect(res.status).toBe(200);
      expect(res.body.participation.state).toBe(state);
      expect(await mailRowsOfParticipation(app, f.crmId, reference)).toEqual([]);
    });

    it('refuses an unknown state or a missing one (400) and answers 404 for an unknown participation', async () => {
      const reference = await participationIn('BOOKED');
      expect((await update(reference, { state: 'DONE' })).status).toBe(400);
      expect((await update(reference, {})).body.errors[0].message).toBe('state is required');
      expect((await update('no-such-participation', { state: 'CANCELED' })).status).toBe(404);
      expect((await update(reference, { state: 'CANCELED' }, '?sendMails=perhaps')).status).toBe(400);
    });
  });

  it("gives another CRM 404 for this CRM's provider and participations", async () => {
    const { reference, customerReference } = await addParticipation(f, roomy.reference, { query: 'sendMails=false' });
    const { crmId, api } = await app.newCrm();
    const other = `/crms/${crmId}/provider/${enc(f.providerRef)}`;
    expect((await api.post(`${other}/participations`, { reference: 'x', appointmentReference: roomy.reference, customerReference, state: 'BOOKED' })).status).toBe(404);
    expect((await api.post(`${other}/participations/${enc(reference)}`, { state: 'CANCELED' })).status).toBe(404);
    expect(await stateOf(reference)).toBe('BOOKED');
  });
});
