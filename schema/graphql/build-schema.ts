import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { OfferingsResolver } from './offerings/offerings.resolver.js';
import { SchedulingResolver } from './scheduling/scheduling.resolver.js';
import { SetupResolver } from './setup/setup.resolver.js';

export const RESOLVERS = [SetupResolver, OfferingsResolver, SchedulingResolver] as const;

/** Builds the executable schema from the type-graphql resolvers. */
export async function buildGraphqlSchema(): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: [...RESOLVERS],
    validate: false,
  });
}
