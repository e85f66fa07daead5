import { Check, Collection, Entity, Index, ManyToOne, OneToMany, PrimaryKey, Property, type Rel, Unique, type Opt } from '@mikro-orm/core';
import { ContactProfile } from '../contact-profiles/contact-profile.entity.js';
import { CrmIntegration } from '../crm/crm-integration.entity.js';
import type { Location } from '../kernel/address.js';
import { newId } from '../kernel/ids.js';
import { Participation } from '../participations/participation.entity.js';
import { Product } from '../products/product.entity.js';
import { Provider } from '../providers/provider.entity.js';
import { Resource } from '../resources/resource.entity.js';
import { Timeslot } from '../timeslots/timeslot.entity.js';
import { User } from '../users/user.entity.js';

export const APPOINTMENT_STATES = ['ACTIVE', 'CANCELLED'] as const;
export type AppointmentState = (typeof APPOINTMENT_STATES)[number];
export const CURRENCIES = ['EUR', 'CHF'] as const;
export type Currency = (typeof CURRENCIES)[number];
export interface Price {
  value: number;
  currency: Currency;
}

/**
 * A slot with participants: created by a CRM, or by the first booking of a
 * slot of a timeslot (then `timeslot` is set and (timeslot, start) is unique,
 * so two first bookings can never create two appointments).
 */
@Entity({ tableName: 'appointment' })
@Unique({ properties: ['crm', 'reference'] })
@Unique({ name: 'appointment_timeslot_start_unique', properties: ['timeslot', 'start'] })
@Index({ properties: ['resource', 'start'] })
@Index({ properties: ['provider', 'start', 'reference'] })
// Only appointments of a series (see Migration20261123073000_HotAppointmentUpdates).
@Index({ name: 'appointment_series_id_index', properties: ['seriesId'], expression: 'create index "appointment_series_id_index" on "appointment" ("series_id") where "series_id" is not null' })
@Check({ name: 'appointment_period_check', expression: '"end" > "start"' })
@Check({ name: 'appointment_capacity_check', expression: 'capacity >= 0' })
export class Appointment {
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne({ entity: () => CrmIntegration, deleteRule: 'cascade' })
  crm!: Rel<CrmIntegration>;

  @ManyToOne({ entity: () => Provider, deleteRule: 'cascade' })
  provider!: Rel<Provider>;

  @ManyToOne({ entity: () => Resource, deleteRule: 'cascade' })
  resource!: Rel<Resource>;

  @ManyToOne({ entity: () => Product, nullable: true, deleteRule: 'set null' })
  product: Rel<Product> | null = null;

  @ManyToOne({ entity: () => Timeslot, nullable: true, deleteRule: 'set null' })
  timeslot: Rel<Timeslot> | null = null;

  @Property({ type: 'string', length: 255 })
  reference!: string;

  @Property({ type: 'datetime' })
  start!: Date;

  @Property({ type: 'datetime' })
  end!: Date;

  @Property({ type: 'integer', default: 0 })
  capacity: Opt<number> = 0;

  @Property({ type: 'boolean', default: false })
  acceptBookings: Opt<boolean> = false;

  @Property({ type: 'string', length: 255, nullable: true })
  productName: string | null = null;

  @ManyToOne({ entity: () => User, nullable: true, deleteRule: 'set null' })
  contact: Rel<User> | null = null;

  @ManyToOne({ entity: () => ContactProfile, nullable: true, deleteRule: 'set null' })
  contactProfile: Rel<ContactProfile> | null = null;

  @Property({ type: 'json', nullable: true })
  address: Location | null = null;

  @Property({ type: 'json', nullable: true })
  price: Price | null = null;

  @Property({ type: 'boolean', default: false })
  archived: Opt<boolean> = false;

  @Property({ type: 'text', nullable: true })
  description: string | null = null;

  @Property({ type: 'text', nullable: true })
  notes: string | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  seriesId: string | null = null;

  @Property({ type: 'string', length: 16 })
  state: Opt<AppointmentState> = 'ACTIVE';

  @OneToMany({ entity: () => Participation, mappedBy: 'appointment' })
  participations = new Collection<Participation>(this);

  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();
}
