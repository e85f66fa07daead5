import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub, type PubSub } from '@graphql-yoga/subscription';
import type { Redis } from 'ioredis';
import type { Clock } from '../../../services/kernel/clock.js';
import type { Context } from '../../../services/kernel/context.js';
import { DomainError } from '../../../services/kernel/errors.js';
import { liveChannel, TOPICS } from '../../../services/kernel/jobs.js';
import type { Logger } from '../../../services/kernel/logger.js';
import { createRedisClient, type RedisTarget } from '../../../services/kernel/redis.js';
import type { AppointmentChangeView, AppointmentFeed } from '../../../services/live/appointment-feed.service.js';
import type { CapacityChangeView, CapacityFeed } from '../../../services/live/capacity-feed.service.js';
import { type CoalescedIterator, coalesce, type PushSource } from './coalescing-iterator.js';

/**
 * Topics the gateway listens to. The worker's outbox relay publishes each
 * `event` row as JSON on the Redis channel named by its topic; the Redis
 * event target parses the JSON, so a payload arrives as the writer built it.
 */
export type LiveTopics = {
  [TOPICS.capacityChanged]: [unknown];
  [TOPICS.appointmentChanged]: [unknown];
};
export type LivePubSub = PubSub<LiveTopics>;

/** Keys that may wait per subscription for a slow consumer; more closes that subscription with an error. */
export const LIVE_MAX_PENDING = 2000;
/** Changes delivered in one message at most. */
export const LIVE_MAX_BATCH = 500;

/**
 * A PubSub for type-graphql backed by Redis pub/sub, with its own publish and
 * subscribe connections. The subscribe connection retries and queues like a
 * worker connection: it must come back after a Redis outage and resubscribe
 * (ioredis does that by itself), never give up. Topics travel on channels
 * prefixed with `prefix` (QUEUE_PREFIX, see `liveChannel`); messages of other
 * prefixes are ignored.
 */
export function createRedisPubSub(target: RedisTarget, prefix: string, logger?: Logger): { pubSub: LivePubSub; events: LiveEvents; close(): void } {
  const publishClient = createRedisClient(target, { name: 'gateway-pubsub-publish' });
  const subscribeClient = createRedisClient(target, { forWorker: true, name: 'gateway-pubsub-subscribe' });
  const channelPrefix = liveChannel(prefix, '');
  // The event target fires SUBSCRIBE, UNSUBSCRIBE and PUBLISH without awaiting them; a command that fails (Redis away,
  // or the connection closed while the gateway shuts down) must be logged, not become an unhandled rejection.
  const failed = (command: string) => (error: unknown) =>
    logger?.warn('live pub/sub command failed', { command, error: error instanceof Error ? error.message : String(error) });
  const subscriber = {
    on: (event: string, listener: (...args: any[]) => void) =>
      subscribeClient.on(event, (channel: unknown, ...rest: unknown[]) => {
        if (event !== 'message') return listener(channel, ...rest);
        if (typeof channel === 'string' && channel.startsWith(channelPrefix)) listener(channel.slice(channelPrefix.length), ...rest);
      }),
    subscribe: (topic: string) => subscribeClient.subscribe(liveChannel(prefix, topic)).catch(failed('subscribe')),
    unsubscribe: (topic: string) => subscribeClient.unsubscribe(liveChannel(prefix, topic)).catch(failed('unsubscribe')),
  };
  const publisher = { publish: (topic: string, message: string) => publishClient.publish(liveChannel(prefix, topic), message).catch(failed('publish')) };
  const eventTarget = createRedisEventTarget({ publishClient: publisher as unknown as Redis, subscribeClient: subscriber as unknown as Redis });
  return {
    pubSub: createPubSub<LiveTopics>({ eventTarget }),
    events: {
      listen: (topic) => (listener) => {
        // The event target parses each message once and calls every listener with the same CustomEvent.
        const callback = (event: Event) => listener((event as CustomEvent).detail);
        eventTarget.addEventListener(topic, callback);
        return () => eventTarget.removeEventListener(topic, callback);
      },
    },
    close() {
      publishClient.disconnect();
      subscribeClient.disconnect();
    },
  };
}

/**
 * The live topics as push sources: each listener is called with every
 * payload published on the topic, the same object for all of them, until it
 * stops listening (Redis SUBSCRIBE while anyone listens). Unlike the PubSub's
 * subscriptions, no per-subscriber queue (repeater) stands in between: the
 * coalescing buffer of each subscription is its only queue.
 */
export interface LiveEvents {
  listen(topic: keyof LiveTopics): PushSource<unknown>;
}

/** An in-memory PubSub, for emitting the SDL and for code that never subscribes. */
export const createLocalPubSub = (): LivePubSub => createPubSub<LiveTopics>();

export interface LiveHubOptions {
  coalesceMs: number;
  maxPending?: number;
  maxBatch?: number;
}

const slowConsumer = () =>
  new DomainError('RATE_LIMITED', 'The subscriber reads too slowly; the subscription was closed. Subscribe again and refetch upcoming_bookables.');

/**
 * The gateway's end of live updates: per subscription, the Redis topic read
 * through a feed's filter and a coalescing, bounded buffer. Holds no state
 * shared between subscriptions or gateways; coalescing only delays delivery.
 */
export class LiveHub {
  constructor(
    private readonly events: LiveEvents,
    private readonly clock: Clock,
    private readonly options: LiveHubOptions,
  ) {}

  /** Capacity changes of the feed's resources, the last value per slot within the coalescing window. */
  capacityChanges(feed: CapacityFeed): CoalescedIterator<CapacityChangeView> {
    return coalesce(this.events.listen(TOPICS.capacityChanged), (payload) => feed.viewsOf(payload, this.clock.now()), {
      windowMs: this.options.coalesceMs,
      maxPending: this.options.maxPending ?? LIVE_MAX_PENDING,
      maxBatch: this.options.maxBatch ?? LIVE_MAX_BATCH,
      rememberDelivered: this.options.maxPending ?? LIVE_MAX_PENDING,
      overflowError: slowConsumer,
    });
  }

  /** Appointment changes of the feed's provider; never coalesced (each change counts), but bounded the same way. */
  appointmentChanges(feed: AppointmentFeed): CoalescedIterator<AppointmentChangeView> {
    return coalesce(this.events.listen(TOPICS.appointmentChanged), (payload) => feed.viewsOf(payload), {
      windowMs: 0,
      maxPending: this.options.maxPending ?? LIVE_MAX_PENDING,
      maxBatch: this.options.maxBatch ?? LIVE_MAX_BATCH,
      overflowError: slowConsumer,
    });
  }
}

/** The GraphQL context of a WebSocket operation: the request context plus the gateway's live hub. */
export interface LiveContext extends Context {
  live?: LiveHub;
}

/** The hub of the context; subscriptions only exist over WebSocket. */
export function liveHubOf(context: LiveContext): LiveHub {
  if (!context.live) throw new DomainError('VALIDATION_FAILED', 'Subscriptions are served over WebSocket (graphql-ws) on /graphql');
  return context.live;
}
