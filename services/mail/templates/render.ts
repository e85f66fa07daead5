import type { Context } from '../../kernel/context.js';
import type { MailJob, MailTemplate } from '../../kernel/jobs.js';
import { renderAppointmentCancelled } from './appointment-cancelled.template.js';
import { renderBookingConfirmation } from './booking-confirmation.template.js';
import { renderBookingRequestReceived } from './booking-request-received.template.js';
import type { RenderedMail } from './layout.js';
import { renderParticipationBooked } from './participation-booked.template.js';
import { renderParticipationCanceled } from './participation-canceled.template.js';
import { renderProviderBookingCancelled } from './provider-booking-cancelled.template.js';
import { renderProviderBookingNotification } from './provider-booking-notification.template.js';
import { renderProviderBookingRequest } from './provider-booking-request.template.js';
import { renderUserVerification } from './user-verification.template.js';

export type { RenderedMail } from './layout.js';

/** Loads what it needs and renders one mail; null when nobody can be written to. */
export type MailRenderer = (ctx: Context, job: MailJob) => Promise<RenderedMail | null>;

const RENDERERS: Record<MailTemplate, MailRenderer> = {
  'user-verification': renderUserVerification,
  'participation-booked': renderParticipationBooked,
  'participation-canceled': renderParticipationCanceled,
  'appointment-cancelled': renderAppointmentCancelled,
  'booking-confirmation': renderBookingConfirmation,
  'booking-request-received': renderBookingRequestReceived,
  'provider-booking-notification': renderProviderBookingNotification,
  'provider-booking-request': renderProviderBookingRequest,
  'provider-booking-cancelled': renderProviderBookingCancelled,
};

/** A template name no renderer knows can never be sent: the worker fails such a job at once. */
export class UnknownTemplateError extends Error {}

/** Loads what the template needs and renders it; null when there is no longer anybody to write to. */
export async function renderMail(ctx: Context, job: MailJob): Promise<RenderedMail | null> {
  const renderer = RENDERERS[job.template];
  if (!renderer) throw new UnknownTemplateError(`No renderer for mail template ${job.template}`);
  return renderer(ctx, job);
}
