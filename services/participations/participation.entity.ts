import { Entity, Index, ManyToOne, PrimaryKey, Property, type Rel, Unique, type Opt } from '@mikro-orm/core';
import { Appointment } from '../appointments/appointment.entity.js';
import { CrmIntegration } from '../crm/crm-integration.entity.js';
import { Customer } from '../customers/customer.entity.js';
import { newId } from '../kernel/ids.js';

export const PARTICIPATION_STATES = ['RESERVED', 'REQUESTED', 'BOOKED', 'CANCELED', 'DELETED'] as const;
export type ParticipationState = (typeof PARTICIPATION_STATES)[number];
/** States that take a place of the appointment's capacity (RESERVED only while its hold lasts). */
export const OCCUPYING_STATES: readonly ParticipationState[] = ['RESERVED', 'REQUESTED', 'BOOKED'];

/**
 * A customer's place in an appointment. A hold is a RESERVED participation
 * with `expiresAt`; capacity arithmetic ignores it once that instant passed,
 * whether or not the worker has removed it yet.
 */
@Entity({ tableName: 'participation' })
@Unique({ properties: ['crm', 'reference'] })
@Unique({ properties: ['placeholderId'] })
@Unique({
  name: 'participation_customer_once_unique',
  expression: `create unique index "participation_customer_once_unique" on "participation" ("appointment_id", "customer_id") where "customer_id" is not null and "state" in ('RESERVED', 'REQUESTED', 'BOOKED')`,
})
@Index({ properties: ['appointment', 'state'] })
// Live holds only, per appointment and expiry (see Migration20261123100000_HoldIndexes).
@Index({
  name: 'participation_hold_expiry_index',
  expression: `create index "participation_hold_expiry_index" on "participation" ("appointment_id", "expires_at") where "state" = 'RESERVED'`,
})
export class Participation {
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne({ entity: () => CrmIntegration, deleteRule: 'cascade' })
  crm!: Rel<CrmIntegration>;

  @ManyToOne({ entity: () => Appointment, deleteRule: 'cascade' })
  appointment!: Rel<Appointment>;

  /** Null only while a booking-flow hold waits for the consumer's data. */
  @ManyToOne({ entity: () => Customer, nullable: true, deleteRule: 'set null' })
  customer: Rel<Customer> | null = null;

  @Property({ type: 'string', length: 255, nullable: true })
  reference: string | null = null;

  /** The id the booking flow hands out as `customer_uuid` and takes back as `placeholder_id`. */
  @Property({ type: 'uuid' })
  placeholderId: Opt<string> = newId();

  @Property({ type: 'string', length: 16 })
  state!: ParticipationState;

  @Property({ type: 'datetime', nullable: true })
  expiresAt: Date | null = null;

  @Property({ type: 'string', length: 32, nullable: true })
  channelKey: string | null = null;

  /** Messages exchanged about this participation (the consumer's booking message first). */
  @Property({ type: 'json', nullable: true })
  messages: string[] | null = null;

  @Property({ type: 'string', length: 8, nullable: true })
  locale: string | null = null;

  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();

  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Opt<Date> = new Date();
}
