import { Arg, Resolver, Root, Subscription } from 'type-graphql';
import { openAppointmentFeed, type AppointmentChangeView } from '../../../services/live/appointment-feed.service.js';
import { openCapacityFeed, type CapacityChangeView } from '../../../services/live/capacity-feed.service.js';
import { DomainError } from '../../../services/kernel/errors.js';
import { WEBHOOK_EVENT_OF_CHANGE } from '../../../services/webhooks/webhook-events.js';
import { ChannelKey } from '../enums.js';
import { plain } from '../plain.js';
import { type LiveContext, liveHubOf } from './live-hub.js';
import { AppointmentChangeType, CapacityChangeType } from './live.types.js';

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
  ): CapacityChangeType[] {
    return overWebSocket(batch);
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
