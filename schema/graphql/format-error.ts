import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { DomainError, toDomainError } from '../../services/kernel/errors.js';
import type { Logger } from '../../services/kernel/logger.js';
import { RateLimitedError } from '../../services/kernel/rate-limits.js';

/**
 * Maps errors once for GraphQL: a DomainError's code goes to
 * `extensions.code` (with its HTTP status beside it); errors GraphQL itself
 * raised keep their code; anything unexpected is logged and hidden.
 */
export function formatGraphqlError(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    if (original instanceof GraphQLError && !(original.originalError instanceof Error)) return withoutSuggestions(formatted);
    if (original instanceof DomainError || !(original instanceof GraphQLError)) {
      const domainError = toDomainError(original);
      if (domainError.code === 'INTERNAL') {
        logger.error('graphql operation failed', { error: original instanceof Error ? original.stack : String(original) });
      }
      return {
        message: domainError.message,
        locations: formatted.locations,
        path: formatted.path,
        extensions: {
          code: domainError.code,
          status: domainError.status,
          ...(domainError.restCode ? { errorCode: domainError.restCode } : {}),
          ...(domainError instanceof RateLimitedError ? { retryAfter: domainError.retryAfterSeconds } : {}),
        },
      };
    }
    return withoutSuggestions(formatted);
  };
}

/**
 * graphql-js names the closest schema names in its errors ("Did you mean the
 * enum value \"BOOKED\"?"), which would list the schema piece by piece where
 * introspection is off. graphql-armor hides field suggestions; this hides
 * the others (enum values, types, arguments) the same way.
 */
function withoutSuggestions(formatted: GraphQLFormattedError): GraphQLFormattedError {
  if (!/Did you mean/.test(formatted.message)) return formatted;
  return { ...formatted, message: formatted.message.replace(/\s*Did you mean[\s\S]*$/, ' [Suggestion hidden]') };
}

/**
 * Errors graphql-js raises before anything runs carry no code of their own;
 * Apollo Server adds one over HTTP. The WebSocket path (graphql-ws) gets the
 * same: BAD_USER_INPUT for a variable that does not fit its type (e.g. a
 * value outside an enum), GRAPHQL_VALIDATION_FAILED for a document the
 * schema refuses.
 */
export function withRequestErrorCode(formatted: GraphQLFormattedError): GraphQLFormattedError {
  // Field errors (with a path) are the resolvers'; only request errors lack a code.
  if (formatted.extensions?.code || formatted.path) return formatted;
  const code = formatted.message.startsWith('Variable "$') ? 'BAD_USER_INPUT' : 'GRAPHQL_VALIDATION_FAILED';
  return { ...formatted, extensions: { ...formatted.extensions, code } };
}
