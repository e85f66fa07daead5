import { Field, ID, InputType, ObjectType } from 'type-graphql';
import { Branch, CreateUserOutcome, Language } from '../enums.js';

@ObjectType('Address', { description: 'A postal address; countryCode is two letters.' })
export class AddressType {
  @Field(() => String) city!: string;
  @Field(() => String) zip!: string;
  @Field(() => String) street!: string;
  @Field(() => String) number!: string;
  @Field(() => String) countryCode!: string;
}

@InputType('AddressInput')
export class AddressInput {
  @Field(() => String) city!: string;
  @Field(() => String) zip!: string;
  @Field(() => String) street!: string;
  @Field(() => String) number!: string;
  @Field(() => String, { nullable: true }) countryCode?: string | null;
}

@ObjectType('User')
export class UserType {
  @Field(() => String, { nullable: true }) reference!: string | null;
  @Field(() => String) email!: string;
  @Field(() => String, { nullable: true }) username!: string | null;
  @Field(() => String, { nullable: true }) firstName!: string | null;
  @Field(() => String, { nullable: true }) lastName!: string | null;
  @Field(() => String, { nullable: true }) phone!: string | null;
  @Field(() => String, { nullable: true }) mobile!: string | null;
}

@InputType('CreateUserInput')
export class CreateUserInput {
  @Field(() => String) reference!: string;
  @Field(() => String) email!: string;
  @Field(() => String) username!: string;
  @Field(() => String) lastName!: string;
  @Field(() => String, { nullable: true }) firstName?: string | null;
  @Field(() => String, { nullable: true }) phone?: string | null;
  @Field(() => String, { nullable: true }) mobile?: string | null;
  @Field(() => Language, { nullable: true, description: 'language of e-mails; defaults to the CRM language' }) language?: Language | null;
}

@ObjectType('CreateUserPayload')
export class CreateUserPayload {
  @Field(() => UserType) user!: UserType;
  @Field(() => Boolean, { description: 'true when a new user was created (REST status 201)' }) created!: boolean;
  @Field(() => CreateUserOutcome) outcome!: `${CreateUserOutcome}`;
}

@ObjectType('Account')
export class AccountType {
  @Field(() => String, { nullable: true }) ownerReference!: string | null;
  @Field(() => Branch) branch!: string;
  @Field(() => String) accountReference!: string;
  @Field(() => AddressType, { nullable: true }) invoiceAddress!: AddressType | null;
  @Field(() => String, { nullable: true }) invoiceContactName!: string | null;
  @Field(() => String, { nullable: true }) invoiceCompanyName!: string | null;
  @Field(() => String, { nullable: true }) invoiceTaxId!: string | null;
  @Field(() => String, { nullable: true }) email!: string | null;
}

@InputType('CreateAccountInput')
export class CreateAccountInput {
  @Field(() => String) ownerReference!: string;
  @Field(() => String) accountReference!: string;
  @Field(() => Branch) branch!: Branch;
  @Field(() => AddressInput, { nullable: true }) invoiceAddress?: AddressInput | null;
  @Field(() => String, { nullable: true }) invoiceContactName?: string | null;
  @Field(() => String, { nullable: true }) invoiceCompanyName?: string | null;
  @Field(() => String, { nullable: true }) invoiceTaxId?: string | null;
  @Field(() => String, { nullable: true }) email?: string | null;
}

@ObjectType('CreateAccountPayload')
export class CreateAccountPayload {
  @Field(() => AccountType) account!: AccountType;
  @Field(() => Boolean) created!: boolean;
}

@ObjectType('Provider')
export class ProviderType {
  @Field(() => ID) uuid!: string;
  @Field(() => String) reference!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) email!: string | null;
  @Field(() => String, { nullable: true }) mobile!: string | null;
  @Field(() => String, { nullable: true }) phone!: string | null;
  @Field(() => String, { nullable: true }) impressum!: string | null;
  @Field(() => Branch, { nullable: true }) branch!: string | null;
  @Field(() => String, { nullable: true, description: 'free text' }) subbranch!: string | null;
}

@InputType('CreateProviderInput')
export class CreateProviderInput {
  @Field(() => String) reference!: string;
  @Field(() => String) ownerReference!: string;
  @Field(() => String) accountReference!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) email?: string | null;
  @Field(() => String, { nullable: true }) mobile?: string | null;
  @Field(() => String, { nullable: true }) phone?: string | null;
  @Field(() => String, { nullable: true }) impressum?: string | null;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => Branch, { nullable: true }) branch?: Branch | null;
  @Field(() => String, { nullable: true, description: 'free text' }) subbranch?: string | null;
  @Field(() => String, { nullable: true, description: 'IANA time zone, default Europe/Berlin' }) timeZone?: string | null;
  @Field(() => Language, { nullable: true, description: 'language of e-mails; default the owner’s language' }) language?: Language | null;
}

@ObjectType('CreateProviderPayload')
export class CreateProviderPayload {
  @Field(() => ProviderType) provider!: ProviderType;
  @Field(() => Boolean) created!: boolean;
}
