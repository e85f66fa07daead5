import { z } from 'zod';
import { type Context, requireCrm } from '../kernel/context.js';
import { parseInput, requiredText } from '../kernel/validation.js';
import { getProvider } from '../providers/provider.service.js';
import { type AppointmentChange, appointmentChangeView, readAppointmentEvent } from './appointment-events.js';
import type { LiveItem } from './capacity-feed.service.js';

const feedInput = z.object({ providerReference: requiredText() });

/** One appointment change as a CRM's `appointmentChanged` subscription receives it (UTC instants, as on /crms). */
export interface AppointmentChangeView {
  change: AppointmentChange;
  providerReference: string;
  appointmentUuid: string;
  appointmentReference: string;
  appointmentState: string;
  participationUuid: string | null;
  participationReference: string | null;
  state: string | null;
  previousState: string | null;
  at: string;
}

export interface AppointmentFeed {
  viewsOf(payload: unknown): LiveItem<AppointmentChangeView>[];
}

/**
 * What a CRM's `appointmentChanged` subscription watches: one provider of
 * the authenticated CRM (401 without a key, 404 for another CRM's provider,
 * as on /crms). Only events of that CRM and provider pass.
 */
export async function openAppointmentFeed(ctx: Context, raw: unknown): Promise<AppointmentFeed> {
  const crm = requireCrm(ctx);
  const input = parseInput(feedInput, raw, 'arguments');
  const provider = await getProvider(ctx, input.providerReference);
  let sequence = 0;
  return {
    viewsOf(payload) {
      const event = readAppointmentEvent(payload);
      if (!event || event.crmId !== crm.id || event.providerId !== provider.id) return [];
      // Every change counts for a CRM, so none replaces another: each gets its own key.
      return [
        {
          key: String(sequence++),
          version: 0,
          value: appointmentChangeView(event, provider.reference),
        },
      ];
    },
  };
}
