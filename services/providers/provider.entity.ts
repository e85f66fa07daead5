import { Entity, ManyToOne, PrimaryKey, Property, type Rel, Unique, type Opt } from '@mikro-orm/core';
import { Account, type Branch } from '../accounts/account.entity.js';
import { CrmIntegration } from '../crm/crm-integration.entity.js';
import { newId } from '../kernel/ids.js';
import { User } from '../users/user.entity.js';

export const DEFAULT_TIME_ZONE = 'Europe/Berlin';

/** A calendar profile: owns products, resources, timeslots and customers. */
@Entity({ tableName: 'provider' })
@Unique({ properties: ['crm', 'reference'] })
export class Provider {
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne({ entity: () => CrmIntegration, deleteRule: 'cascade' })
  crm!: Rel<CrmIntegration>;

  @Property({ type: 'string', length: 255 })
  reference!: string;

  @ManyToOne({ entity: () => User })
  owner!: Rel<User>;

  @ManyToOne({ entity: () => Account })
  account!: Rel<Account>;

  @Property({ type: 'string', length: 255 })
  name!: string;

  @Property({ type: 'string', length: 320, nullable: true })
  email: string | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  mobile: string | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  phone: string | null = null;

  @Property({ type: 'text', nullable: true })
  impressum: string | null = null;

  @Property({ type: 'text', nullable: true })
  description: string | null = null;

  @Property({ type: 'string', length: 32, nullable: true })
  branch: Branch | null = null;

  @Property({ type: 'string', length: 255, nullable: true })
  subbranch: string | null = null;

  /** IANA zone in which wall-clock input without offset is read and e-mails show times. */
  @Property({ type: 'string', length: 64, default: DEFAULT_TIME_ZONE })
  timeZone: Opt<string> = DEFAULT_TIME_ZONE;

  /** Language of e-mails when neither the customer nor the request names one. */
  @Property({ type: 'string', length: 8, default: 'de' })
  language: Opt<string> = 'de';

  @Property({ type: 'boolean', default: false })
  themingAllowed: Opt<boolean> = false;

  @Property({ type: 'boolean', default: true })
  localisationAllowed: Opt<boolean> = true;

  @Property({ type: 'boolean', default: false })
  customFieldsAllowed: Opt<boolean> = false;

  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();
}
