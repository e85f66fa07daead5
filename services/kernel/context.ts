import type { EntityManager } from '@mikro-orm/postgresql';
import type { CrmIntegration } from '../crm/crm-integration.entity.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import { DomainError, RetryableRefusal } from './errors.js';
import { newId } from './ids.js';
import { addTouchedResources, notifyOutboxIfWritten, takeTouchedResources } from '../outbox/outbox.service.js';
import type { CalendarVersions } from './calendar-version.js';
import type { Logger } from './logger.js';
import type { PublicLimiter } from './rate-limits.js';
import { metrics } from './metrics.js';
import { inSqlTransaction, type SqlTransaction } from './sql.js';

/** Who is acting: an authenticated CRM, an anonymous consumer, or the service itself (worker, admin tool). */
export type Actor = { kind: 'crm'; crmId: string } | { kind: 'public' } | { kind: 'system'; name: string };

/**
 * Everything a use case needs about the request, passed as the first argument
 * of every service function. Built by the GraphQL server, the REST facade and
 * the worker alike.
 */
export interface Context {
  /** An EntityManager forked for this request; never the global one. */
  em: EntityManager;
  crm: CrmIntegration | null;
  actor: Actor;
  clock: Clock;
  config: Config;
  logger: Logger;
  requestId: string;
  /** Language the caller asked for (e.g. a `language` cookie), if any. */
  language?: string;
  /** Change counters per resource (Redis), bumped after a commit that changed capacity; absent in tools without Redis. */
  calendar?: CalendarVersions;
  /** The caller's IP as the gateway trusts it (TRUST_PROXY); absent outside a request. */
  clientIp?: string;
  /** The public flow's limits; absent when PUBLIC_RATE_LIMIT=off or outside the gateway. */
  limits?: PublicLimiter;
  /** Set inside inLeanTransaction: `sql()` statements run in this transaction (see kernel/sql.ts). */
  sqlTransaction?: SqlTransaction;
}

export interface ContextRoot {
  em: EntityManager;
  clock: Clock;
  config: Config;
  logger: Logger;
  calendar?: CalendarVersions;
  limits?: PublicLimiter;
}

/** Builds a context with a fresh EntityManager fork. */
export function createContext(
  root: ContextRoot,
  fields: { crm?: CrmIntegration | null; actor?: Actor; requestId?: string; language?: string; clientIp?: string; log?: Record<string, unknown> } = {},
): Context {
  const requestId = fields.requestId ?? newId();
  // Every line a use case logs names its request (or job) and CRM.
  const logger = root.logger.child({ requestId, ...(fields.crm ? { crmId: fields.crm.id } : {}), ...fields.log });
  return {
    em: root.em.fork({ clear: true, useContext: false }),
    crm: fields.crm ?? null,
    actor: fields.actor ?? (fields.crm ? { kind: 'crm', crmId: fields.crm.id } : { kind: 'public' }),
    clock: root.clock,
    config: root.config,
    logger,
    requestId,
    language: fields.language,
    calendar: root.calendar,
    clientIp: fields.clientIp,
    limits: root.limits,
  };
}

/** The CRM the request is authenticated as; fails with 401 for anonymous callers. */
export function requireCrm(ctx: Context): CrmIntegration {
  if (!ctx.crm) throw new DomainError('UNAUTHENTICATED', 'Missing or invalid X-SERVICE-CLIENT-ID');
  return ctx.crm;
}

/**
 * Runs `work` in one transaction on a fork of the context's EntityManager.
 * If it wrote outbox rows, the relay is woken by a NOTIFY that PostgreSQL
 * delivers only when the transaction commits. Once the outermost transaction
 * committed, the change counters of the resources whose capacity it changed
 * are bumped before the caller answers, so no cache serves an answer from
 * before this write to a request that starts after it.
 */
export async function inTransaction<T>(ctx: Context, work: (tx: Context) => Promise<T>): Promise<T> {
  const outermost = !ctx.em.isInTransaction();
  let touched: Set<string> | undefined;
  const attempt = () =>
    ctx.em.transactional(async (em) => {
      const value = await work({ ...ctx, em });
      await notifyOutboxIfWritten(em);
      touched = takeTouchedResources(em);
      return value;
    });
  // Only the outermost transaction can be retried: a nested one's failure has already aborted its parent.
  const result = outermost ? await retryingConflicts(ctx, attempt) : await attempt();
  if (touched?.size) {
    if (!outermost) addTouchedResources(ctx.em, touched);
    else await bumpCalendars(ctx, touched);
  }
  return result;
}

/** After a commit: moves the change counters of the resources whose capacity it changed (a failure is logged, not thrown). */
async function bumpCalendars(ctx: Context, touched: Set<string> | undefined): Promise<void> {
  if (!touched?.size || !ctx.calendar) return;
  await ctx.calendar.bump(touched).catch((error) => ctx.logger.warn('could not bump calendar versions', { error: String(error) }));
}

/**
 * Thrown inside inLeanTransaction by a write that needs what only the ORM's
 * transaction offers, or has to start over, and has written nothing: the
 * whole write runs again in inTransaction.
 */
export class RetryInOrmTransaction extends Error {
  constructor(reason: string) {
    super(`the write continues in an ORM transaction: ${reason}`);
  }
}

/**
 * Runs a write made of `sql()` statements only (the booking flow's) in
 * inSqlTransaction: BEGIN and COMMIT travel with its first and last
 * statement, so the transaction costs no round trip of its own and the
 * last statement's row locks go with its end. Retried after a serialization
 * failure or deadlock like inTransaction; the change counters of the
 * resources whose capacity it changed move after the commit. When `work`
 * throws RetryInOrmTransaction, the whole write runs again in inTransaction.
 */
export async function inLeanTransaction<T>(ctx: Context, work: (tx: Context) => Promise<T>): Promise<T> {
  // Inside a caller's transaction (or another lean one), the statements belong to it.
  if (ctx.em.isInTransaction() || ctx.sqlTransaction) return inTransaction(ctx, work);
  let result: T;
  try {
    result = await retryingConflicts(ctx, () => inSqlTransaction(ctx, work));
  } catch (error) {
    if (!(error instanceof RetryInOrmTransaction)) throw error;
    ctx.logger.debug('write continues in an ORM transaction', { reason: error.message });
    metrics.ormTransactionFallbacks.inc();
    return inTransaction(ctx, work);
  }
  await bumpCalendars(ctx, takeTouchedResources(ctx.em));
  return result;
}

/** SQLSTATEs after which running the whole transaction again is safe and likely to succeed. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 4;

/** The SQLSTATE a failure is retried and counted under (a serialization failure, a deadlock, a RetryableRefusal); null for any other. */
function conflictCode(error: unknown): string | null {
  if (error instanceof RetryableRefusal) return error.sqlState;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRYABLE.has(code) ? code : null;
}

/**
 * Runs a transaction again after a serialization failure, a deadlock or a
 * RetryableRefusal, with a random back-off that grows per attempt, so colliding writers
 * spread out instead of colliding again; the last failure is rethrown.
 */
export async function retryingConflicts<T>(ctx: Pick<Context, 'logger'>, attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      const code = conflictCode(error);
      if (n >= MAX_ATTEMPTS || !code) throw error;
      ctx.logger.debug('transaction retried after a conflict', { code, attempt: n });
      metrics.transactionRetries.inc({ code });
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * 2 ** n));
    }
  }
}
