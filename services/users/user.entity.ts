import { Entity, Index, ManyToOne, PrimaryKey, Property, type Rel, Unique, type Opt } from '@mikro-orm/core';
import { CrmIntegration } from '../crm/crm-integration.entity.js';
import { newId } from '../kernel/ids.js';

/**
 * A person: staff of providers created by a CRM, or a consumer created by the
 * public booking flow (no reference, no username).
 */
@Entity({ tableName: 'app_user' })
@Unique({ properties: ['crm', 'reference'] })
@Unique({ properties: ['crm', 'email'] })
@Unique({ properties: ['crm', 'username'] })
@Index({ properties: ['crm', 'mobile'] })
export class User {
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne({ entity: () => CrmIntegration, deleteRule: 'cascade' })
  crm!: Rel<CrmIntegration>;

  @Property({ type: 'string', length: 255, nullable: true })
  reference: string | null = null;

  @Property({ type: 'string', length: 320 })
  email!: string;

  @Property({ type: 'boolean', default: false })
  emailVerified: Opt<boolean> = false;

  /** Token of the pending e-mail verification; null when none is pending. */
  @Property({ type: 'string', length: 64, nullable: true })
  emailVerificationToken: string | null = null;

  @Property({ type: 'string', length: 255, nullable: true })
  username: string | null = null;

  @Property({ type: 'string', length: 255, nullable: true })
  firstName: string | null = null;

  @Property({ type: 'string', length: 255, nullable: true })
  lastName: string | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  phone: string | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  mobile: string | null = null;

  @Property({ type: 'string', length: 8, default: 'de' })
  language: Opt<string> = 'de';

  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();
}
