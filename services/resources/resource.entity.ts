import { Collection, Entity, Index, ManyToMany, ManyToOne, PrimaryKey, Property, type Rel, Unique, type Opt } from '@mikro-orm/core';
import { ContactProfile } from '../contact-profiles/contact-profile.entity.js';
import { CrmIntegration } from '../crm/crm-integration.entity.js';
import type { PostalAddress } from '../kernel/address.js';
import { newId } from '../kernel/ids.js';
import { Product } from '../products/product.entity.js';
import { Provider } from '../providers/provider.entity.js';
import { User } from '../users/user.entity.js';

/**
 * A bookable object (an agent, a court, a van). Deleting keeps the row with
 * `deletedAt` set so archived appointments keep their history; a deleted
 * resource answers 404 and its reference may be used again.
 */
@Entity({ tableName: 'resource' })
@Unique({ name: 'resource_crm_reference_unique', expression: 'create unique index "resource_crm_reference_unique" on "resource" ("crm_id", "reference") where "deleted_at" is null' })
export class Resource {
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne({ entity: () => CrmIntegration, deleteRule: 'cascade' })
  crm!: Rel<CrmIntegration>;

  @ManyToOne({ entity: () => Provider, deleteRule: 'cascade' })
  provider!: Rel<Provider>;

  @Property({ type: 'string', length: 255 })
  reference!: string;

  @Property({ type: 'string', length: 255 })
  publicName!: string;

  @Property({ type: 'string', length: 255 })
  internalName!: string;

  @Property({ type: 'text', nullable: true })
  description: string | null = null;

  @ManyToMany({ entity: () => Product, pivotTable: 'resource_product' })
  products = new Collection<Product>(this);

  // Is this user a resource's contact? (the consumer lookup, see Migration20261124090000_PublicUsers)
  @Index({ name: 'resource_contact_id_index' })
  @ManyToOne({ entity: () => User, nullable: true, deleteRule: 'set null' })
  contact: Rel<User> | null = null;

  @ManyToOne({ entity: () => ContactProfile, nullable: true, deleteRule: 'set null' })
  contactProfile: Rel<ContactProfile> | null = null;

  @Property({ type: 'string', length: 2048, nullable: true })
  website: string | null = null;

  @Property({ type: 'string', length: 2048, nullable: true })
  imageUrl: string | null = null;

  /** Help text shown to consumers next to the message field of the booking form. */
  @Property({ type: 'text', nullable: true })
  messageHelpText: string | null = null;

  @Property({ type: 'json', nullable: true })
  address: PostalAddress | null = null;

  @Property({ type: 'boolean', default: false })
  archived: Opt<boolean> = false;

  @Property({ type: 'datetime', nullable: true })
  deletedAt: Date | null = null;

  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();
}
