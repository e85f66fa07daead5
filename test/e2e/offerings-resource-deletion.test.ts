import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Appointment } from '../../services/appointments/appointment.entity.js';
import { Participation } from '../../services/participations/participation.entity.js';
import { Resource } from '../../services/resources/resource.entity.js';
import { setupProvider, type ProviderFixture } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import type { ApiClient } from '../support/http.js';
import { createResource, enc, insertAppointment, insertParticipation, outboxRowsFor } from '../support/offerings-fixtures.js';

describe('offerings: deleting a resource with appointments', () => {
  let app: TestApp;
  let api: ApiClient;
  let crmId: string;
  let fixture: ProviderFixture;
  let base: string;

  beforeAll(async () => {
    app = await startTestApp();
    ({ crmId, api } = await app.newCrm());
    fixture = await setupProvider(api, crmId);
    base = `/crms/${crmId}/provider/${enc(fixture.providerRef)}`;
  });
  afterAll(async () => app?.close());

  const newResource = async () => {
    const resourceRef = await createResource(api, crmId, fixture.providerRef);
    return { resourceRef, at: { crmId, providerRef: fixture.providerRef, resourceRef } };
  };
  const appointmentById = (id: string) => app.context().em.findOneOrFail(Appointment, { id });
  const participationById = (id: string) => app.context().em.findOneOrFail(Participation, { id });

  it('refuses (409) while a future ACTIVE appointment exists and changes nothing', async () => {
    const { resourceRef, at } = await newResource();
    const appointment = await insertAppointment(app, at, { startInMinutes: 24 * 60 });
    const booked = await insertParticipation(app, appointment, { state: 'BOOKED' });

    for (const query of ['', '?ignoreFutureAppointments=false']) {
      const res = await api.delete(`${base}/resources/${enc(resourceRef)}${query}`);
      expect(res.status).toBe(409);
      expect(res.body.errors[0].errorCode).toBe('HAS_FUTURE_APPOINTMENTS');
      expect(res.body.errors[0].message).toContain('has 1 future appointment(s)');
      expect(res.body.errors[0].message).toContain('ignoreFutureAppointments=true');
    }
    expect((await appointmentById(appointment.id)).state).toBe('ACTIVE');
    expect((await participationById(booked.id)).state).toBe('BOOKED');
    expect((await api.get(`${base}/resources`)).body.map((r: { reference: string }) => r.reference)).toContain(resourceRef);
    expect(await outboxRowsFor(app, appointment.id)).toEqual([]);
  });

  it('is not blocked by past or cancelled appointments, which stay as they are', async () => {
    const { resourceRef, at } = await newResource();
    const past = await insertAppointment(app, at, { startInMinutes: -24 * 60 });
    const pastBooking = await insertParticipation(app, past, { state: 'BOOKED' });
    const cancelled = await insertAppointment(app, at, { startInMinutes: 48 * 60, state: 'CANCELLED' });

    const res = await api.delete(`${base}/resources/${enc(resourceRef)}`);
    expect(res.status).toBe(204);
    const pastAfter = await appointmentById(past.id);
    expect([pastAfter.state, pastAfter.archived]).toEqual(['ACTIVE', false]);
    expect((await participationById(pastBooking.id)).state).toBe('BOOKED');
    expect((await appointmentById(cancelled.id)).archived).toBe(false);
    expect(await outboxRowsFor(app, past.id)).toEqual([]);
    expect((await app.context().em.findOneOrFail(Resource, { crm: crmId, reference: resourceRef })).deletedAt).toBeInstanceOf(Date);
  });

  it('with ignoreFutureAppointments cancels and archives them, informs participants and announces capacity', async () => {
    const { resourceRef, at } = await newResource();
    const future = await insertAppointment(app, at, { startInMinutes: 3 * 60, capacity: 6 });
    const booked = await insertParticipation(app, future, { state: 'BOOKED' });
    const requested = await insertParticipation(app, future, { state: 'REQUESTED' });
    const withoutEmail = await insertParticipation(app, future, { state: 'BOOKED', email: null });
    const anonymousHold = await insertParticipation(app, future, { state: 'RESERVED', customer: null, expiresInMinutes: 2 });
    const expiredHold = await insertParticipation(app, future, { state: 'RESERVED', expiresInMinutes: -1 });
    const alreadyCanceled = await insertParticipation(app, future, { state: 'CANCELED' });
    const deleted = await insertParticipation(app, future, { state: 'DELETED' });
    const later = await insertAppointment(app, at, { startInMinutes: 7 * 24 * 60 });
    const laterBooked = await insertParticipation(app, later, { state: 'BOOKED' });
    const past = await insertAppointment(app, at, { startInMinutes: -60 });

    const res = await api.delete(`${base}/resources/${enc(resourceRef)}?ignoreFutureAppointments=true`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');

    for (const appointment of [future, later]) {
      const after = await appointmentById(appointment.id);
      expect([after.state, after.archived]).toEqual(['CANCELLED', true]);
    }
    const pastAfter = await appointmentById(past.id);
    expect([pastAfter.state, pastAfter.archived]).toEqual(['ACTIVE', false]);

    const stateOf = async (p: Participation) => (await participationById(p.id)).state;
    expect(await stateOf(booked)).toBe('CANCELED');
    expect(await stateOf(requested)).toBe('CANCELED');
    expect(await stateOf(withoutEmail)).toBe('CANCELED');
    expect(await stateOf(anonymousHold)).toBe('CANCELED');
    expect(await stateOf(expiredHold)).toBe('CANCELED');
    expect(await stateOf(alreadyCanceled)).toBe('CANCELED');
    // Cancelled as a CRM cancel does it (spec rule 4): DELETED too, without a mail (DELETED -> CANCELED sends none).
    expect(await stateOf(deleted)).toBe('CANCELED');
    expect(await stateOf(laterBooked)).toBe('CANCELED');

    const rows = await outboxRowsFor(app, future.id);
    const mails = rows.filter((row) => row.kind === 'mail');
    expect(mails.map((row) => row.topic)).toEqual(['mail', 'mail']);
    expect(mails.map((row) => row.payload.template)).toEqual(['appointment-cancelled', 'appointment-cancelled']);
    expect(mails.map((row) => row.payload.params.participationId).sort()).toEqual([booked.id, requested.id].sort());
    expect(mails.every((row) => row.payload.params.appointmentId === future.id)).toBe(true);
    const events = rows.filter((row) => row.kind === 'event');
    expect(events).toHaveLength(1);
    expect(events[0]!.topic).toBe('capacity-changed');
    expect(events[0]!.payload).toMatchObject({ appointmentId: future.id, capacity: 6, capacityLeft: 0 });

    const laterRows = await outboxRowsFor(app, later.id);
    expect(laterRows.filter((row) => row.kind === 'mail').map((row) => row.payload.params.participationId)).toEqual([laterBooked.id]);
    expect(laterRows.filter((row) => row.kind === 'event')).toHaveLength(1);
    expect(await outboxRowsFor(app, past.id)).toEqual([]);

    const resource = await app.context().em.findOneOrFail(Resource, { crm: crmId, reference: resourceRef });
    expect(resource.deletedAt).toBeInstanceOf(Date);
    expect((await api.get(`${base}/resources`)).body.map((r: { reference: string }) => r.reference)).not.toContain(resourceRef);
    expect((await api.delete(`${base}/resources/${enc(resourceRef)}?ignoreFutureAppointments=true`)).status).toBe(404);
  });

  it('uses the service clock: an appointment that starts after the clock is future', async () => {
    const { resourceRef, at } = await newResource();
    const appointment = await insertAppointment(app, at, { startInMinutes: 30 });
    try {
      app.clock.set(new Date(appointment.start.getTime() + 60_000));
      expect((await api.delete(`${base}/resources/${enc(resourceRef)}`)).status).toBe(204);
    } finally {
      app.clock.reset();
    }
    expect((await appointmentById(appointment.id)).state).toBe('ACTIVE');
  });

  it('answers the same through GraphQL', async () => {
    const { resourceRef, at } = await newResource();
    const appointment = await insertAppointment(app, at, { startInMinutes: 60 });
    await insertParticipation(app, appointment, { state: 'BOOKED' });
    const mutation = `mutation ($p: String!, $r: String!, $ignore: Boolean!) {
      deleteResource(providerReference: $p, reference: $r, ignoreFutureAppointments: $ignore)
    }`;
    const refused = await api.graphql(mutation, { p: fixture.providerRef, r: resourceRef, ignore: false });
    expect(refused.body.errors![0].extensions.code).toBe('HAS_FUTURE_APPOINTMENTS');
    expect((await appointmentById(appointment.id)).state).toBe('ACTIVE');
    const done = await api.graphql(mutation, { p: fixture.providerRef, r: resourceRef, ignore: true });
    expect(done.body).toEqual({ data: { deleteResource: true } });
    expect((await appointmentById(appointment.id)).state).toBe('CANCELLED');
    expect((await outboxRowsFor(app, appointment.id)).filter((row) => row.kind === 'mail')).toHaveLength(1);
  });

  it("gives a second CRM 404 when it tries to delete the first CRM's resource", async () => {
    const { resourceRef } = await newResource();
    const { crmId: otherCrm, api: other } = await app.newCrm();
    const own = await setupProvider(other, otherCrm);
    expect((await other.delete(`/crms/${otherCrm}/provider/${enc(own.providerRef)}/resources/${enc(resourceRef)}?ignoreFutureAppointments=true`)).status).toBe(404);
    expect((await api.get(`${base}/resources`)).body.map((r: { reference: string }) => r.reference)).toContain(resourceRef);
  });
});
