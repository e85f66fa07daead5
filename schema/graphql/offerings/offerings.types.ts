import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { ContactChannelType as ContactChannelKind } from '../enums.js';
import { AddressInput, AddressType } from '../setup/setup.types.js';

@ObjectType('Product', { description: 'A service a provider offers; durations and buffer times in minutes.' })
export class ProductType {
  @Field(() => ID) uuid!: string;
  @Field(() => String) reference!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => Int, { nullable: true }) minDuration!: number | null;
  @Field(() => Int, { nullable: true }) maxDuration!: number | null;
  @Field(() => Int, { nullable: true, description: 'preparation/travel time kept free before a booking' }) leadTimeMinutes!: number | null;
  @Field(() => Int, { nullable: true, description: 'return/closing time kept free after a booking' }) followUpTimeMinutes!: number | null;
}

@InputType('ProductInput', { description: 'A known reference updates the product; optional fields left out keep their value.' })
export class ProductInput {
  @Field(() => String) reference!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => Int, { nullable: true, description: 'positive whole minutes, at most maxDuration' }) minDuration?: number | null;
  @Field(() => Int, { nullable: true, description: 'positive whole minutes' }) maxDuration?: number | null;
  @Field(() => Int, { nullable: true, description: 'non-negative whole minutes' }) leadTimeMinutes?: number | null;
  @Field(() => Int, { nullable: true, description: 'non-negative whole minutes' }) followUpTimeMinutes?: number | null;
}

@ObjectType('CreateProductPayload')
export class CreateProductPayload {
  @Field(() => ProductType) product!: ProductType;
  @Field(() => Boolean, { description: 'true when a new product was created (REST 201); false when the reference was updated (REST 200)' })
  created!: boolean;
}

@ObjectType('Resource', { description: 'A bookable object of a provider.' })
export class ResourceType {
  @Field(() => ID) uuid!: string;
  @Field(() => String) reference!: string;
  @Field(() => String, { description: 'reference of the provider' }) provider!: string;
  @Field(() => String) publicName!: string;
  @Field(() => String) internalName!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => String, { nullable: true, description: 'user reference of the contact person' }) contact!: string | null;
  @Field(() => String, { nullable: true }) contactProfileReference!: string | null;
  @Field(() => Boolean, { description: 'archived resources cannot be booked by consumers' }) archived!: boolean;
  @Field(() => [String], { description: 'product references' }) products!: string[];
  @Field(() => AddressType, { nullable: true }) address!: AddressType | null;
  @Field(() => String, { nullable: true }) website!: string | null;
  @Field(() => String, { nullable: true, description: 'shown as imgUrl by the public data of the booking flow' }) imageUrl!: string | null;
  @Field(() => String, { nullable: true, description: 'shown as msgHelpText by the public data of the booking flow' })
  messageHelpText!: string | null;
}

@InputType('ResourceInput', { description: 'Create or update; on update only the fields given change (null clears).' })
export class ResourceInput {
  @Field(() => String) reference!: string;
  @Field(() => String) publicName!: string;
  @Field(() => String) internalName!: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => [String], { nullable: true, description: 'references of existing products of the provider' }) products?: string[] | null;
  @Field(() => String, { nullable: true, description: 'user reference of a staff member; required with contactProfileReference' })
  contact?: string | null;
  @Field(() => String, { nullable: true }) contactProfileReference?: string | null;
  @Field(() => String, { nullable: true, description: 'http(s) URL' }) website?: string | null;
  @Field(() => String, { nullable: true, description: 'http(s) URL' }) imageUrl?: string | null;
  @Field(() => String, { nullable: true }) messageHelpText?: string | null;
  @Field(() => AddressInput, { nullable: true, description: 'countryCode defaults to DE' }) address?: AddressInput | null;
  @Field(() => Boolean, { nullable: true, description: 'archived resources cannot be booked by consumers' }) archived?: boolean;
}

@InputType('ResourceUpdateInput', { description: 'Only the fields given change (null clears an optional one).' })
export class ResourceUpdateInput {
  @Field(() => String, { nullable: true }) publicName?: string;
  @Field(() => String, { nullable: true }) internalName?: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => [String], { nullable: true }) products?: string[] | null;
  @Field(() => String, { nullable: true }) contact?: string | null;
  @Field(() => String, { nullable: true }) contactProfileReference?: string | null;
  @Field(() => String, { nullable: true }) website?: string | null;
  @Field(() => String, { nullable: true }) imageUrl?: string | null;
  @Field(() => String, { nullable: true }) messageHelpText?: string | null;
  @Field(() => AddressInput, { nullable: true }) address?: AddressInput | null;
  @Field(() => Boolean, { nullable: true }) archived?: boolean;
}

@ObjectType('SaveResourcePayload')
export class SaveResourcePayload {
  @Field(() => ResourceType) resource!: ResourceType;
  @Field(() => Boolean, { description: 'true when created (REST 201), false when updated (REST 200)' }) created!: boolean;
}

@ObjectType('ContactChannel')
export class ContactChannelType {
  @Field(() => String, { nullable: true }) label!: string | null;
  @Field(() => ContactChannelKind) type!: string;
  @Field(() => String) value!: string;
}

@InputType('ContactChannelInput')
export class ContactChannelInput {
  @Field(() => String, { nullable: true }) label?: string | null;
  @Field(() => ContactChannelKind, { description: 'one channel per type' }) type!: ContactChannelKind;
  @Field(() => String) value!: string;
}

@ObjectType('ContactProfile', { description: 'Public contact data of a user; reference and providerReference are null for the general profile.' })
export class ContactProfileType {
  @Field(() => String, { nullable: true }) reference!: string | null;
  @Field(() => String, { nullable: true }) userReference!: string | null;
  @Field(() => String, { nullable: true }) providerReference!: string | null;
  @Field(() => String) name!: string;
  @Field(() => [ContactChannelType]) contactChannels!: ContactChannelType[];
}

@InputType('GeneralContactProfileInput', { description: 'Replaces the channels: types given are created or updated, the others removed.' })
export class GeneralContactProfileInput {
  @Field(() => String) name!: string;
  @Field(() => [ContactChannelInput]) contactChannels!: ContactChannelInput[];
}

@InputType('ContactProfileInput')
export class ContactProfileInput {
  @Field(() => String) reference!: string;
  @Field(() => String) userReference!: string;
  @Field(() => String, { description: 'must equal the providerReference argument' }) providerReference!: string;
  @Field(() => String) name!: string;
  @Field(() => [ContactChannelInput]) contactChannels!: ContactChannelInput[];
}

@ObjectType('SaveContactProfilePayload')
export class SaveContactProfilePayload {
  @Field(() => ContactProfileType) contactProfile!: ContactProfileType;
  @Field(() => Boolean, { description: 'true when created (REST 201), false when updated (REST 200)' }) created!: boolean;
}
