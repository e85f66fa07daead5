import { Entity, ManyToOne, PrimaryKey, Property, type Rel, Unique, type Opt } from '@mikro-orm/core';
import { CrmIntegration } from '../crm/crm-integration.entity.js';
import type { PostalAddress } from '../kernel/address.js';
import { newId } from '../kernel/ids.js';
import { User } from '../users/user.entity.js';

export const BRANCHES = ['real-estate', 'facilities', 'handyman', 'sports-and-leisure', 'misc'] as const;
export type Branch = (typeof BRANCHES)[number];

/** A billing customer, owned by a user. */
@Entity({ tableName: 'account' })
@Unique({ properties: ['crm', 'reference'] })
export class Account {
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne({ entity: () => CrmIntegration, deleteRule: 'cascade' })
  crm!: Rel<CrmIntegration>;

  @Property({ type: 'string', length: 255 })
  reference!: string;

  @ManyToOne({ entity: () => User })
  owner!: Rel<User>;

  @Property({ type: 'string', length: 32 })
  branch!: Branch;

  @Property({ type: 'json', nullable: true })
  invoiceAddress: PostalAddress | null = null;

  @Property({ type: 'string', length: 255, nullable: true })
  invoiceContactName: string | null = null;

  @Property({ type: 'string', length: 255, nullable: true })
  invoiceCompanyName: string | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  invoiceTaxId: string | null = null;

  @Property({ type: 'string', length: 320, nullable: true })
  email: string | null = null;

  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();
}
