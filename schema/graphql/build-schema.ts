import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema, type PubSub } from 'type-graphql';
import { BookingResolver } from './booking/booking.resolver.js';
import { AppointmentChangeFieldsResolver, LiveResolver } from './live/live.resolver.js';
import { MailResolver } from './mail/mail.resolver.js';
import { OfferingsResolver } from './offerings/offerings.resolver.js';
import { SchedulingResolver } from './scheduling/scheduling.resolver.js';
import { SetupResolver } from './setup/setup.resolver.js';
import { WebhookResolver } from './webhooks/webhook.resolver.js';

export const RESOLVERS = [SetupResolver, OfferingsResolver, SchedulingResolver, LiveResolver, AppointmentChangeFieldsResolver, BookingResolver, MailResolver, WebhookResolver] as const;

/**
 * Builds the executable schema from the type-graphql resolvers. `pubSub` is
 * the gateway's Redis-backed PubSub (the SDL emission passes an in-memory one).
 */
export async function buildGraphqlSchema(pubSub: PubSub): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: [...RESOLVERS],
    validate: false,
    pubSub,
  });
}
