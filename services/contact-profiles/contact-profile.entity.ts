import { Collection, Entity, ManyToOne, OneToMany, PrimaryKey, Property, type Rel, Unique } from '@mikro-orm/core';
import { CrmIntegration } from '../crm/crm-integration.entity.js';
import { newId } from '../kernel/ids.js';
import { Provider } from '../providers/provider.entity.js';
import { User } from '../users/user.entity.js';
import { ContactChannel } from './contact-channel.entity.js';

/**
 * Public contact data of a user. `provider` null marks the user's general
 * profile (at most one); otherwise it applies to that provider only.
 */
@Entity({ tableName: 'contact_profile' })
@Unique({ properties: ['crm', 'reference'] })
@Unique({ name: 'contact_profile_general_unique', expression: 'create unique index "contact_profile_general_unique" on "contact_profile" ("user_id") where "provider_id" is null' })
export class ContactProfile {
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne({ entity: () => CrmIntegration, deleteRule: 'cascade' })
  crm!: Rel<CrmIntegration>;

  @ManyToOne({ entity: () => User, deleteRule: 'cascade' })
  user!: Rel<User>;

  @ManyToOne({ entity: () => Provider, nullable: true, deleteRule: 'cascade' })
  provider: Rel<Provider> | null = null;

  @Property({ type: 'string', length: 255, nullable: true })
  reference: string | null = null;

  @Property({ type: 'string', length: 255 })
  name!: string;

  @OneToMany({ entity: () => ContactChannel, mappedBy: 'profile', orphanRemoval: true })
  channels = new Collection<ContactChannel>(this);
}
