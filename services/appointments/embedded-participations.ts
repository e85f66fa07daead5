import { z } from 'zod';
import { Customer } from '../customers/customer.entity.js';
import { NOTE_MAX } from '../customers/customer.service.js';
import type { Context } from '../kernel/context.js';
import { DomainError } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import { emailAddress, internationalPhone, requiredText } from '../kernel/validation.js';
import { PARTICIPATION_STATES } from '../participations/participation.entity.js';
import { Participation } from '../participations/participation.entity.js';
import { createParticipation } from '../participations/participation.service.js';
import type { Provider } from '../providers/provider.entity.js';
import type { Appointment } from './appointment.entity.js';

/** A participation in a single-appointment create (spec: Participation in an appointment; `reference` required there). */
export const embeddedParticipationInput = z.object({
  reference: requiredText(),
  name: requiredText(),
  email: emailAddress(),
  mobile: internationalPhone().nullish(),
  note: z.string().max(NOTE_MAX).nullish(),
  state: z.enum(PARTICIPATION_STATES),
});
export type EmbeddedParticipation = z.output<typeof embeddedParticipationInput>;

/** At most this many participations in one appointment body. */
export const EMBEDDED_PARTICIPATIONS_MAX = 500;

/**
 * Adds the participations of a single-appointment create to the new
 * appointment, in the caller's transaction, through the same use case as
 * `POST …/participations` (capacity, once per customer, mails of the new
 * state, events): nothing of the rules is repeated here. Each participant
 * becomes the provider's customer found by e-mail, or a new one. A refusal
 * names the participation (`participations[i]…`) and, the transaction being
 * the caller's, leaves nothing created.
 */
export async function addEmbeddedParticipations(ctx: Context, provider: Provider, appointment: Appointment, participations: EmbeddedParticipation[]): Promise<void> {
  const seen = new Set<string>();
  for (const [i, participation] of participations.entries()) {
    const field = `participations[${i}]`;
    if (seen.has(participation.reference)) throw new DomainError('VALIDATION_FAILED', `${field}.reference: ${participation.reference} is given twice`);
    seen.add(participation.reference);
    if (await ctx.em.count(Participation, { crm: provider.crm, reference: participation.reference })) {
      throw new DomainError('CONFLICT', `${field}.reference: participation ${participation.reference} already exists`);
    }
    const customer = await customerByEmail(ctx, provider, participation);
    try {
      await createParticipation(
        ctx,
        provider.reference,
        { reference: participation.reference, appointmentReference: appointment.reference, customerReference: customer.reference, state: participation.state },
        { ignoreCapacity: false, onDuplicateRaise: true, sendMails: true },
      );
    } catch (error) {
      if (error instanceof DomainError) throw new DomainError(error.code, `${field}: ${error.message}`, error.restCode);
      throw error;
    }
  }
}

/**
 * The provider's live customer with this e-mail (case-insensitive, the oldest
 * if several), else a new one with a generated reference. An existing
 * customer's data is the CRM's: only its empty mobile and note are filled.
 */
async function customerByEmail(ctx: Context, provider: Provider, participant: EmbeddedParticipation): Promise<Customer> {
  const rows = await ctx.em.execute<{ id: string }[]>(
    'select id from customer where provider_id = ? and lower(email) = ? and erased_at is null order by created_at, id limit 1',
    [provider.id, participant.email.toLowerCase()],
  );
  const found = rows[0] ? await ctx.em.findOneOrFail(Customer, { id: rows[0].id }) : null;
  if (found) {
    if (!found.mobile && participant.mobile) found.mobile = participant.mobile;
    if (!found.note && participant.note) found.note = participant.note;
    await ctx.em.flush();
    return found;
  }
  const customer = ctx.em.create(Customer, {
    crm: provider.crm,
    provider,
    reference: newId(),
    userName: participant.name,
    email: participant.email,
    mobile: participant.mobile ?? null,
    note: participant.note ?? null,
  });
  await ctx.em.flush();
  return customer;
}
