import { Entity, ManyToOne, PrimaryKey, Property, type Rel, Unique } from '@mikro-orm/core';
import { newId } from '../kernel/ids.js';
import { ContactProfile } from './contact-profile.entity.js';

export const CONTACT_CHANNEL_TYPES = ['mobile', 'phone', 'email', 'video', 'messenger', 'link', 'location'] as const;
export type ContactChannelType = (typeof CONTACT_CHANNEL_TYPES)[number];

/** One way to reach a contact; at most one per type and profile. */
@Entity({ tableName: 'contact_channel' })
@Unique({ properties: ['profile', 'type'] })
export class ContactChannel {
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne({ entity: () => ContactProfile, deleteRule: 'cascade' })
  profile!: Rel<ContactProfile>;

  @Property({ type: 'string', length: 16 })
  type!: ContactChannelType;

  @Property({ type: 'string', length: 255, nullable: true })
  label: string | null = null;

  @Property({ type: 'string', length: 1024 })
  value!: string;
}
