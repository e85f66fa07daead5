/**
 * The one error vocabulary of the service. Each code has a fixed HTTP status;
 * GraphQL carries the code in `extensions.code`, the REST facade turns it into
 * the status and `{ "api-info", "errors": [{ errorCode, message }] }`.
 */
export const ERROR_STATUS = {
  VALIDATION_FAILED: 400,
  DUPLICATE_REFERENCE: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  USER_NOT_FOUND: 404,
  BRANCH_NOT_FOUND: 404,
  REFERENCE_UNPARSABLE: 404,
  EMAIL_IN_USE: 409,
  USERNAME_IN_USE: 409,
  CONFLICT: 409,
  HAS_FUTURE_APPOINTMENTS: 409,
  HAS_ACTIVE_APPOINTMENTS: 409,
  TRANSITION_NOT_ALLOWED: 409,
  CAPACITY_EXHAUSTED: 409,
  ALREADY_PARTICIPATING: 409,
  SLOT_TAKEN: 412,
  LINK_INVALID: 403,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class DomainError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    /** The error code the legacy REST API documents for this case, where it documents one. */
    readonly restCode?: string,
  ) {
    super(message);
    this.name = 'DomainError';
    this.status = ERROR_STATUS[code];
  }
}

export const validationError = (message: string) => new DomainError('VALIDATION_FAILED', message);

/**
 * A refusal that a transaction committed by someone else while ours ran
 * caused, and that a fresh transaction may not meet: retryingConflicts runs
 * the whole transaction again (counted under `sqlState`); if it persists,
 * the caller gets `refusal`.
 */
export class RetryableRefusal extends DomainError {
  constructor(
    refusal: DomainError,
    readonly sqlState: string,
  ) {
    super(refusal.code, refusal.message, refusal.restCode);
  }
}
export const notFound = (what: string, reference?: string) =>
  new DomainError('NOT_FOUND', reference === undefined ? `${what} not found` : `${what} not found: ${reference}`);

/** Wraps anything thrown into a DomainError; unknown errors become INTERNAL without leaking details. */
/** The found value, or null when the lookup failed with NOT_FOUND; every other error stays an error. */
export async function unlessNotFound<T>(lookup: Promise<T>): Promise<T | null> {
  try {
    return await lookup;
  } catch (error) {
    if (error instanceof DomainError && error.code === 'NOT_FOUND') return null;
    throw error;
  }
}

export function toDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  const translated = translateDatabaseError(error);
  if (translated) return translated;
  return new DomainError('INTERNAL', 'Internal server error');
}

/** Unique constraints whose violation (by a concurrent request) has a documented error. */
const UNIQUE_CONSTRAINT_ERRORS: Record<string, () => DomainError> = {
  app_user_crm_id_email_unique: () => new DomainError('EMAIL_IN_USE', 'User with given email already exists.'),
  app_user_crm_id_username_unique: () => new DomainError('USERNAME_IN_USE', 'User with given username already exists.'),
  participation_customer_once_unique: () =>
    new DomainError('ALREADY_PARTICIPATING', 'AppointmentAlreadyBookedException: the customer already takes part in this appointment'),
};

/** Exclusion constraints whose violation (by a concurrent request) has a documented error. */
const EXCLUSION_CONSTRAINT_ERRORS: Record<string, () => DomainError> = {
  // Two first bookings whose blocked periods overlap: the later one finds the slot taken (see booking/place-claim.ts).
  appointment_lot_no_overlap: () => new DomainError('SLOT_TAKEN', 'Das überlappt mit einem anderen Termin.', '201'),
  // Two parallel creates or updates of timeslots of one resource that overlap: the later one is refused.
  timeslot_resource_no_overlap: () => new DomainError('CONFLICT', 'The timeslot overlaps another timeslot of the same resource'),
};

/** PostgreSQL error codes that mean the caller's input broke a database rule, not that the service failed. */
function translateDatabaseError(error: unknown): DomainError | undefined {
  const code = (error as { code?: string } | null)?.code;
  const constraint = (error as { constraint?: string } | null)?.constraint;
  switch (code) {
    case '23505':
      return (
        (constraint ? UNIQUE_CONSTRAINT_ERRORS[constraint]?.() : undefined) ??
        new DomainError('CONFLICT', `A record with the same unique value already exists${constraint ? ` (${constraint})` : ''}`)
      );
    case '23P01':
      return (constraint ? EXCLUSION_CONSTRAINT_ERRORS[constraint]?.() : undefined) ?? new DomainError('CONFLICT', 'The change overlaps an existing record');
    case '23514':
      return validationError(`A value is out of its allowed range${constraint ? ` (${constraint})` : ''}`);
    case '22001':
      return validationError('A value is too long');
    case '08P01':
    case '22021':
    case '22P05':
      // A NUL character (%00 in a path, \u0000 in JSON) cannot travel in PostgreSQL's text protocol:
      // the server rejects the message (08P01) or the encoding (22021); either way the input is at fault.
      return validationError('A value contains a character that is not allowed');
    case '22P02':
    case '22007':
    case '22008':
      return validationError('A value has an invalid format');
    case '40001':
    case '40P01':
      return new DomainError('CONFLICT', 'The request conflicted with a concurrent change; please retry');
    default:
      return isDatabaseUnavailable(error) ? new DomainError('UNAVAILABLE', 'The database is not available right now; please retry shortly') : undefined;
  }
}

/**
 * PostgreSQL being down, restarting or out of connections (and a statement
 * it cancelled for running too long): the service is unavailable for a
 * moment, which is a 503, not a failure of the service (500).
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '57014', '08000', '08001', '08003', '08004', '08006', '53300', '53400']);
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);
const UNAVAILABLE_MESSAGE = /Connection terminated|connection timeout|Timeout acquiring a connection|Client has encountered a connection error|Connection ended|the database system is (starting up|shutting down|in recovery)|terminating connection/i;

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 4; depth++) {
    const { code, name, message, cause } = current as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === 'string' && (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_NODE_CODES.has(code))) return true;
    if (name === 'ConnectionException') return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)) return true;
    current = cause ?? (current as { previous?: unknown }).previous;
  }
  return false;
}
