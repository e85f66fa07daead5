import { Entity, PrimaryKey, Property, Unique, type Opt } from '@mikro-orm/core';

/** A CRM that integrates over the REST API; its key is only ever stored as a SHA-256 hash. */
@Entity({ tableName: 'crm_integration' })
export class CrmIntegration {
  @PrimaryKey({ type: 'string', length: 100 })
  id!: string;

  @Unique()
  @Property({ type: 'string', length: 64 })
  keyHash!: string;

  /** Language of users this CRM creates when the request names none. */
  @Property({ type: 'string', length: 8, default: 'de' })
  language: Opt<string> = 'de';

  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();

  @Property({ type: 'datetime' })
  keyIssuedAt: Opt<Date> = new Date();
}
