import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError, validationError } from '../kernel/errors.js';
import { findOneMapped } from '../kernel/sql.js';
import { CrmIntegration } from './crm-integration.entity.js';

const CRM_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export const hashKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');
const newKey = (): string => `bk_${randomBytes(32).toString('base64url')}`;

/** Creates a CRM integration and returns its key; the key is shown once and only its hash is kept. */
export async function createCrm(em: EntityManager, crmId: string, language = 'de'): Promise<{ crm: CrmIntegration; key: string }> {
  if (!CRM_ID_PATTERN.test(crmId)) {
    throw validationError('crmId must be 1-100 letters, digits, dots, dashes or underscores');
  }
  if (await em.findOne(CrmIntegration, { id: crmId })) {
    throw new DomainError('CONFLICT', `CRM ${crmId} already exists; use rotate-key to issue a new key`);
  }
  const key = newKey();
  const crm = em.create(CrmIntegration, { id: crmId, keyHash: hashKey(key), language, createdAt: new Date(), keyIssuedAt: new Date() });
  await em.persistAndFlush(crm);
  return { crm, key };
}

/** Replaces a CRM's key; the old key stops working at once. */
export async function rotateCrmKey(em: EntityManager, crmId: string): Promise<string> {
  const crm = await em.findOne(CrmIntegration, { id: crmId });
  if (!crm) throw new DomainError('NOT_FOUND', `CRM not found: ${crmId}`);
  const key = newKey();
  crm.keyHash = hashKey(key);
  crm.keyIssuedAt = new Date();
  await em.flush();
  return key;
}

/**
 * The CRM a key belongs to, or null. Lookup by hash is an index probe, so
 * timing reveals nothing of the key. Every /crms request and GraphQL
 * operation asks (see findOneMapped).
 */
export async function findCrmByKey(em: EntityManager, key: string | undefined): Promise<CrmIntegration | null> {
  if (!key || key.length > 200) return null;
  return findOneMapped(em, CrmIntegration, 'select * from crm_integration where key_hash = ? limit 1', [hashKey(key)]);
}

export async function listCrms(em: EntityManager): Promise<CrmIntegration[]> {
  return em.find(CrmIntegration, {}, { orderBy: { id: 'asc' } });
}
