/**
 * The not-found convention of single lookups (Query `account`, `provider`,
 * `user`, `resource`, `contactProfile`, `generalContactProfile`, `customer`):
 * null when the thing asked for, or its parent (the provider of
 * `resource(providerReference, …)`, the user of a general contact profile),
 * does not exist for the calling CRM (`unlessNotFound` of the kernel's
 * errors). Lookups are scoped to the caller's CRM, so another CRM's provider
 * is "unknown" too and nothing is revealed. Authentication and every other
 * error stay errors; mutations keep NOT_FOUND.
 */
/** The sentence the descriptions of single lookups end with. */
export const NOT_FOUND_CONVENTION = 'Like every single lookup it answers null, not a NOT_FOUND error, for what the calling CRM does not have; a missing or wrong key is still an error.';

/** The description of a single lookup: what it returns, when it is null, and the convention. */
export const lookupDescription = (what: string, nullWhen: string): string => `${what}; null when ${nullWhen}. ${NOT_FOUND_CONVENTION}`;
