import { Check, Entity, Index, ManyToOne, PrimaryKey, Property, type Rel, Unique, type Opt } from '@mikro-orm/core';
import { CrmIntegration } from '../crm/crm-integration.entity.js';
import type { Location } from '../kernel/address.js';
import { newId } from '../kernel/ids.js';
import { Resource } from '../resources/resource.entity.js';

export const TIMESLOT_STATES = ['CREATED', 'BOOKABLE'] as const;
export type TimeslotState = (typeof TIMESLOT_STATES)[number];

/** Availability of a resource, cut into bookable slots of `raster` minutes. */
@Entity({ tableName: 'timeslot' })
@Unique({ properties: ['crm', 'reference'] })
@Index({ properties: ['resource', 'start'] })
@Check({ name: 'timeslot_period_check', expression: '"end" > "start"' })
@Check({ name: 'timeslot_raster_check', expression: 'raster > 0' })
@Check({ name: 'timeslot_capacity_check', expression: 'default_capacity > 0' })
export class Timeslot {
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne({ entity: () => CrmIntegration, deleteRule: 'cascade' })
  crm!: Rel<CrmIntegration>;

  @ManyToOne({ entity: () => Resource, deleteRule: 'cascade' })
  resource!: Rel<Resource>;

  @Property({ type: 'string', length: 255 })
  reference!: string;

  @Property({ type: 'datetime' })
  start!: Date;

  @Property({ type: 'datetime' })
  end!: Date;

  @Property({ type: 'integer' })
  raster!: number;

  @Property({ type: 'integer' })
  defaultCapacity!: number;

  @Property({ type: 'boolean' })
  defaultAcceptBookings!: boolean;

  @Property({ type: 'json', nullable: true })
  address: Location | null = null;

  @Property({ type: 'string', length: 16 })
  state: Opt<TimeslotState> = 'CREATED';

  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();
}
