import { Entity, Index, ManyToOne, PrimaryKey, Property, type Rel, Unique, type Opt } from '@mikro-orm/core';
import { newId } from '../kernel/ids.js';
import { User } from '../users/user.entity.js';
import { Provider } from './provider.entity.js';

export type StaffRole = 'OWNER' | 'STAFF';

/** A user with access to a provider's calendar. The owner is always staff. */
@Entity({ tableName: 'staff_membership' })
@Unique({ properties: ['provider', 'user'] })
// Is this user staff anywhere? (the consumer lookup, see Migration20261124090000_PublicUsers)
@Index({ properties: ['user'] })
export class StaffMembership {
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne({ entity: () => Provider, deleteRule: 'cascade' })
  provider!: Rel<Provider>;

  @ManyToOne({ entity: () => User, deleteRule: 'cascade' })
  user!: Rel<User>;

  @Property({ type: 'string', length: 16 })
  role: Opt<StaffRole> = 'STAFF';

  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();
}
