import { Entity, ManyToOne, PrimaryKey, Property, type Rel, Unique, type Opt } from '@mikro-orm/core';
import { newId } from '../kernel/ids.js';
import { Resource } from './resource.entity.js';

export const CHANNEL_KEYS = ['RESOURCE_PUBLIC', 'RESOURCE_EXCLUSIVE', 'RESOURCE_REFERENCE', 'CALENDAR_PUBLIC'] as const;
export type ChannelKey = (typeof CHANNEL_KEYS)[number];
export const BOOKING_PROCESSES = ['IMMEDIATE', 'REQUESTED'] as const;
export type BookingProcess = (typeof BOOKING_PROCESSES)[number];

/**
 * How one booking channel behaves for one resource. A channel without a row
 * inherits RESOURCE_PUBLIC's row (RESOURCE_EXCLUSIVE is closed instead); see
 * `effectiveChannel`.
 */
@Entity({ tableName: 'booking_channel_setting' })
@Unique({ properties: ['resource', 'channelKey'] })
export class BookingChannelSetting {
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne({ entity: () => Resource, deleteRule: 'cascade' })
  resource!: Rel<Resource>;

  @Property({ type: 'string', length: 32 })
  channelKey!: ChannelKey;

  @Property({ type: 'boolean', default: true })
  visible: Opt<boolean> = true;

  @Property({ type: 'string', length: 16, default: 'IMMEDIATE' })
  bookingProcess: Opt<BookingProcess> = 'IMMEDIATE';

  /** Product ids offered on this channel; null offers every product of the resource. */
  @Property({ type: 'json', nullable: true })
  productIds: string[] | null = null;

  /** Product ids offered only on channels that list them here. */
  @Property({ type: 'json' })
  exclusiveProductIds: Opt<string[]> = [];

  /** For RESOURCE_EXCLUSIVE: the customer ids allowed to book. */
  @Property({ type: 'json' })
  acceptedCustomerIds: Opt<string[]> = [];
}
