import type { EntityManager } from '@mikro-orm/postgresql';
import type { CrmIntegration } from '../crm/crm-integration.entity.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import { DomainError } from './errors.js';
import { newId } from './ids.js';
import { notifyOutboxIfWritten } from '../outbox/outbox.service.js';
import type { Logger } from './logger.js';

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
}

export interface ContextRoot {
  em: EntityManager;
  clock: Clock;
  config: Config;
  logger: Logger;
}

/** Builds a context with a fresh EntityManager fork. */
export function createContext(
  root: ContextRoot,
  fields: { crm?: CrmIntegration | null; actor?: Actor; requestId?: string; language?: string } = {},
): Context {
  const requestId = fields.requestId ?? newId();
  return {
    em: root.em.fork({ clear: true, useContext: false }),
    crm: fields.crm ?? null,
    actor: fields.actor ?? (fields.crm ? { kind: 'crm', crmId: fields.crm.id } : { kind: 'public' }),
    clock: root.clock,
    config: root.config,
    logger: root.logger,
    requestId,
    language: fields.language,
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
 * delivers only when the transaction commits.
 */
export async function inTransaction<T>(ctx: Context, work: (tx: Context) => Promise<T>): Promise<T> {
  return ctx.em.transactional(async (em) => {
    const result = await work({ ...ctx, em });
    await notifyOutboxIfWritten(em);
    return result;
  });
}
