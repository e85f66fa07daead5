import { Check, Entity, ManyToOne, PrimaryKey, Property, type Rel, Unique, type Opt } from '@mikro-orm/core';
import { CrmIntegration } from '../crm/crm-integration.entity.js';
import { newId } from '../kernel/ids.js';
import { Provider } from '../providers/provider.entity.js';

/** A service a provider offers; lead and follow-up time are kept free around a booked slot. */
@Entity({ tableName: 'product' })
@Unique({ properties: ['crm', 'reference'] })
@Check({ name: 'product_durations_check', expression: 'min_duration is null or max_duration is null or min_duration <= max_duration' })
@Check({ name: 'product_times_check', expression: '(lead_time_minutes is null or lead_time_minutes >= 0) and (follow_up_time_minutes is null or follow_up_time_minutes >= 0)' })
export class Product {
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne({ entity: () => CrmIntegration, deleteRule: 'cascade' })
  crm!: Rel<CrmIntegration>;

  @ManyToOne({ entity: () => Provider, deleteRule: 'cascade' })
  provider!: Rel<Provider>;

  @Property({ type: 'string', length: 255 })
  reference!: string;

  @Property({ type: 'string', length: 255 })
  name!: string;

  @Property({ type: 'text', nullable: true })
  description: string | null = null;

  @Property({ type: 'integer', nullable: true })
  minDuration: number | null = null;

  @Property({ type: 'integer', nullable: true })
  maxDuration: number | null = null;

  @Property({ type: 'integer', nullable: true })
  leadTimeMinutes: number | null = null;

  @Property({ type: 'integer', nullable: true })
  followUpTimeMinutes: number | null = null;

  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();
}
