import { Arg, Ctx, FieldResolver, Resolver, Root, Subscription } from 'type-graphql';
import { Appointment } from '../../../services/appointments/appointment.entity.js';
import { APPOINTMENT_VIEW_POPULATE } from '../../../services/appointments/appointment.view.js';
import { type Context, requireCrm } from '../../../services/kernel/context.js';
import { DomainError } from '../../../services/kernel/errors.js';
import { isUuid } from '../../../services/kernel/ids.js';
import { openAppointmentFeed, type AppointmentChangeView } from '../../../services/live/appointment-feed.service.js';
import { openCapacityFeed, type CapacityChangeView } from '../../../services/live/capacity-feed.service.js';
import { Participation } from '../../../services/participations/participation.entity.js';
import { toParticipationNode } from '../../../services/participations/participation.service.js';
import { WEBHOOK_EVENT_OF_CHANGE } from '../../../services/webhooks/webhook-events.js';
import { toBookableType } from '../booking/booking.resolver.js';
import { ChannelKey } from '../enums.js';
import { plain } from '../plain.js';
import { toAppointmentType } from '../scheduling/scheduling.resolver.js';
import { AppointmentType, ParticipationType } from '../scheduling/scheduling.types.js';
import { type LiveContext, liveHubOf } from './live-hub.js';
import { AppointmentChangeType, CapacityChangeScope, CapacityChangeType } from './live.types.js';

/** A subscription sent over HTTP is executed like a query, without a batch: refuse it with a clear message. */
function overWebSocket<T>(batch: T[] | undefined): T[] {
  if (!Array.isArray(batch)) throw new DomainError('VALIDATION_FAILED', 'Subscriptions are served over WebSocket (graphql-ws protocol) on /graphql');
  return batch;
}

/** Live updates over graphql-ws: public capacity changes, and appointment changes for a CRM. */
@Resolver()
export class LiveResolver {
  @Subscription(() => [CapacityChangeType], {
    description:
      'Public. Capacity changes of the resources (UUID, resourceId@platform or resourceId@providerUuid@platform), as batches: ' +
      'bursts on one slot are coalesced, the last value wins. Optional window [from, to) of slot starts (without offset: provider time zone) ' +
      'and channelKey (default RESOURCE_PUBLIC; a channel that is not visible yields nothing).',
    subscribe: async ({ args, context }) => {
      const hub = liveHubOf(context as LiveContext);
      return hub.capacityChanges(await openCapacityFeed(context as LiveContext, plain(args)));
    },
  })
  capacityChanged(
    @Root() batch: CapacityChangeView[],
    @Arg('refs', () => [String]) _refs: string[],
    @Arg('from', () => String, { nullable: true }) _from?: string | null,
    @Arg('to', () => String, { nullable: true }) _to?: string | null,
    @Arg('channelKey', () => ChannelKey, { nullable: true }) _channelKey?: ChannelKey | null,
    @Arg('timeFormat', () => String, { nullable: true, description: 'pattern of the bookables’ formattedStart/formattedEnd, as in upcomingBookables' })
    _timeFormat?: string | null,
    @Arg('languageTag', () => String, { nullable: true, description: 'language of month and day names, as in upcomingBookables' }) _languageTag?: string | null,
  ): CapacityChangeType[] {
    return overWebSocket(batch).map((change) => ({
      scope: change.scope as CapacityChangeScope,
      resourceUuid: change.resource_uuid,
      from: change.from,
      to: change.to,
      bookable: change.bookable && toBookableType(change.bookable),
    }));
  }

  @Subscription(() => [AppointmentChangeType], {
    description:
      'CRM only (X-SERVICE-CLIENT-ID in connectionParams). Participations added, state changes, expired holds, cancelled and deleted ' +
      'appointments of one provider of the CRM, in order, as batches.',
    subscribe: async ({ args, context }) => {
      const hub = liveHubOf(context as LiveContext);
      return hub.appointmentChanges(await openAppointmentFeed(context as LiveContext, plain(args)));
    },
  })
  appointmentChanged(
    @Root() batch: AppointmentChangeView[],
    @Arg('providerReference', () => String) _providerReference: string,
  ): AppointmentChangeType[] {
    // The change is named as webhooks name it (WebhookEventType): PARTICIPATION_ADDED ↔ participation.added.
    return overWebSocket(batch).map((view) => ({ ...view, change: WEBHOOK_EVENT_OF_CHANGE[view.change] }));
  }
}

/**
 * The appointment and participation of a change as they are now, with the
 * same `id`s as the `appointments` query: a normalized client cache updates
 * what it shows from the subscription. Read when the change is delivered
 * (one lookup per selected field and change; CRM subscriptions are few).
 */
@Resolver(() => AppointmentChangeType)
export class AppointmentChangeFieldsResolver {
  @FieldResolver(() => AppointmentType, { nullable: true, description: 'the appointment now; null once it was deleted' })
  async appointment(@Root() change: AppointmentChangeView, @Ctx() ctx: Context): Promise<AppointmentType | null> {
    if (!isUuid(change.appointmentUuid)) return null;
    const crm = requireCrm(ctx);
    const em = ctx.em.fork();
    const found = await em.findOne(
      Appointment,
      { id: change.appointmentUuid, provider: { crm, reference: change.providerReference } },
      { populate: APPOINTMENT_VIEW_POPULATE },
    );
    return found && toAppointmentType(found, ctx.clock.now());
  }

  @FieldResolver(() => ParticipationType, { nullable: true, description: 'the participation now; null for appointment changes and once it was deleted' })
  async participation(@Root() change: AppointmentChangeView, @Ctx() ctx: Context): Promise<ParticipationType | null> {
    if (!change.participationUuid || !isUuid(change.participationUuid)) return null;
    const crm = requireCrm(ctx);
    const em = ctx.em.fork();
    const found = await em.findOne(
      Participation,
      { id: change.participationUuid, appointment: { provider: { crm, reference: change.providerReference } } },
      { populate: ['appointment', 'customer'] },
    );
    return found && toParticipationNode(found);
  }
}
