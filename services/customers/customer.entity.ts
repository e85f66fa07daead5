import { Check, Entity, Index, ManyToOne, PrimaryKey, Property, type Rel, Unique, type Opt } from '@mikro-orm/core';
import { CrmIntegration } from '../crm/crm-integration.entity.js';
import { newId } from '../kernel/ids.js';
import { Provider } from '../providers/provider.entity.js';
import { User } from '../users/user.entity.js';

/**
 * Contact data of a person who books with one provider. Deleting a customer
 * erases every personal field and sets `erasedAt`; the row stays so booking
 * history keeps its shape without naming anyone.
 */
@Entity({ tableName: 'customer' })
@Unique({ properties: ['crm', 'reference'] })
// The booking flow finds a provider's customer by its user or its e-mail on every booking.
@Index({ properties: ['provider', 'user'] })
@Index({ properties: ['provider', 'email'] })
@Check({ name: 'customer_note_length_check', expression: 'char_length(note) <= 1023' })
export class Customer {
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne({ entity: () => CrmIntegration, deleteRule: 'cascade' })
  crm!: Rel<CrmIntegration>;

  @ManyToOne({ entity: () => Provider, deleteRule: 'cascade' })
  provider!: Rel<Provider>;

  @Property({ type: 'string', length: 255 })
  reference!: string;

  @Property({ type: 'string', length: 255 })
  userName!: string;

  @Property({ type: 'string', length: 320, nullable: true })
  email: string | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  mobile: string | null = null;

  @Property({ type: 'text', nullable: true })
  note: string | null = null;

  @Property({ type: 'string', length: 8, nullable: true })
  language: string | null = null;

  /** The consumer account behind a customer created by the booking flow. */
  @ManyToOne({ entity: () => User, nullable: true, deleteRule: 'set null' })
  user: Rel<User> | null = null;

  @Property({ type: 'datetime', nullable: true })
  erasedAt: Date | null = null;

  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();
}
