import { Migration } from '@mikro-orm/migrations';

export class Migration20261121215704_Initial extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "crm_integration" ("id" varchar(100) not null, "key_hash" varchar(64) not null, "language" varchar(8) not null default 'de', "created_at" timestamptz not null, "key_issued_at" timestamptz not null, constraint "crm_integration_pkey" primary key ("id"));`);
    this.addSql(`alter table "crm_integration" add constraint "crm_integration_key_hash_unique" unique ("key_hash");`);

    this.addSql(`create table "outbox_message" ("id" bigserial primary key, "kind" varchar(16) not null, "topic" varchar(64) not null, "payload" jsonb not null, "run_at" timestamptz null, "created_at" timestamptz not null, "dispatched_at" timestamptz null, "attempts" int not null default 0, "last_error" text null);`);
    this.addSql(`create index "outbox_message_pending_index" on "outbox_message" ("id") where "dispatched_at" is null;`);

    this.addSql(`create table "app_user" ("id" uuid not null, "crm_id" varchar(100) not null, "reference" varchar(255) null, "email" varchar(320) not null, "email_verified" boolean not null default false, "email_verification_token" varchar(64) null, "username" varchar(255) null, "first_name" varchar(255) null, "last_name" varchar(255) null, "phone" varchar(64) null, "mobile" varchar(64) null, "language" varchar(8) not null default 'de', "created_at" timestamptz not null, constraint "app_user_pkey" primary key ("id"));`);
    this.addSql(`create index "app_user_crm_id_mobile_index" on "app_user" ("crm_id", "mobile");`);
    this.addSql(`alter table "app_user" add constraint "app_user_crm_id_username_unique" unique ("crm_id", "username");`);
    this.addSql(`alter table "app_user" add constraint "app_user_crm_id_email_unique" unique ("crm_id", "email");`);
    this.addSql(`alter table "app_user" add constraint "app_user_crm_id_reference_unique" unique ("crm_id", "reference");`);

    this.addSql(`create table "account" ("id" uuid not null, "crm_id" varchar(100) not null, "reference" varchar(255) not null, "owner_id" uuid not null, "branch" varchar(32) not null, "invoice_address" jsonb null, "invoice_contact_name" varchar(255) null, "invoice_company_name" varchar(255) null, "invoice_tax_id" varchar(64) null, "email" varchar(320) null, "created_at" timestamptz not null, constraint "account_pkey" primary key ("id"));`);
    this.addSql(`alter table "account" add constraint "account_crm_id_reference_unique" unique ("crm_id", "reference");`);

    this.addSql(`create table "provider" ("id" uuid not null, "crm_id" varchar(100) not null, "reference" varchar(255) not null, "owner_id" uuid not null, "account_id" uuid not null, "name" varchar(255) not null, "email" varchar(320) null, "mobile" varchar(64) null, "phone" varchar(64) null, "impressum" text null, "description" text null, "branch" varchar(32) null, "subbranch" varchar(255) null, "time_zone" varchar(64) not null default 'Europe/Berlin', "language" varchar(8) not null default 'de', "theming_allowed" boolean not null default false, "localisation_allowed" boolean not null default true, "custom_fields_allowed" boolean not null default false, "created_at" timestamptz not null, constraint "provider_pkey" primary key ("id"));`);
    this.addSql(`alter table "provider" add constraint "provider_crm_id_reference_unique" unique ("crm_id", "reference");`);

    this.addSql(`create table "staff_membership" ("id" uuid not null, "provider_id" uuid not null, "user_id" uuid not null, "role" varchar(16) not null default 'STAFF', "created_at" timestamptz not null, constraint "staff_membership_pkey" primary key ("id"));`);
    this.addSql(`alter table "staff_membership" add constraint "staff_membership_provider_id_user_id_unique" unique ("provider_id", "user_id");`);

    this.addSql(`create table "product" ("id" uuid not null, "crm_id" varchar(100) not null, "provider_id" uuid not null, "reference" varchar(255) not null, "name" varchar(255) not null, "description" text null, "min_duration" int null, "max_duration" int null, "lead_time_minutes" int null, "follow_up_time_minutes" int null, "created_at" timestamptz not null, constraint "product_pkey" primary key ("id"), constraint product_times_check check ((lead_time_minutes is null or lead_time_minutes >= 0) and (follow_up_time_minutes is null or follow_up_time_minutes >= 0)), constraint product_durations_check check (min_duration is null or max_duration is null or min_duration <= max_duration));`);
    this.addSql(`alter table "product" add constraint "product_crm_id_reference_unique" unique ("crm_id", "reference");`);

    this.addSql(`create table "customer" ("id" uuid not null, "crm_id" varchar(100) not null, "provider_id" uuid not null, "reference" varchar(255) not null, "user_name" varchar(255) not null, "email" varchar(320) null, "mobile" varchar(64) null, "note" text null, "language" varchar(8) null, "user_id" uuid null, "erased_at" timestamptz null, "created_at" timestamptz not null, constraint "customer_pkey" primary key ("id"), constraint customer_note_length_check check (char_length(note) <= 1023));`);
    this.addSql(`alter table "customer" add constraint "customer_crm_id_reference_unique" unique ("crm_id", "reference");`);

    this.addSql(`create table "contact_profile" ("id" uuid not null, "crm_id" varchar(100) not null, "user_id" uuid not null, "provider_id" uuid null, "reference" varchar(255) null, "name" varchar(255) not null, constraint "contact_profile_pkey" primary key ("id"));`);
    this.addSql(`create unique index "contact_profile_general_unique" on "contact_profile" ("user_id") where "provider_id" is null;`);
    this.addSql(`alter table "contact_profile" add constraint "contact_profile_crm_id_reference_unique" unique ("crm_id", "reference");`);

    this.addSql(`create table "resource" ("id" uuid not null, "crm_id" varchar(100) not null, "provider_id" uuid not null, "reference" varchar(255) not null, "public_name" varchar(255) not null, "internal_name" varchar(255) not null, "description" text null, "contact_id" uuid null, "contact_profile_id" uuid null, "website" varchar(2048) null, "image_url" varchar(2048) null, "message_help_text" text null, "address" jsonb null, "archived" boolean not null default false, "deleted_at" timestamptz null, "created_at" timestamptz not null, constraint "resource_pkey" primary key ("id"));`);
    this.addSql(`create unique index "resource_crm_reference_unique" on "resource" ("crm_id", "reference") where "deleted_at" is null;`);

    this.addSql(`create table "timeslot" ("id" uuid not null, "crm_id" varchar(100) not null, "resource_id" uuid not null, "reference" varchar(255) not null, "start" timestamptz not null, "end" timestamptz not null, "raster" int not null, "default_capacity" int not null, "default_accept_bookings" boolean not null, "address" jsonb null, "state" varchar(16) not null default 'CREATED', "created_at" timestamptz not null, constraint "timeslot_pkey" primary key ("id"), constraint timeslot_capacity_check check (default_capacity > 0), constraint timeslot_raster_check check (raster > 0), constraint timeslot_period_check check ("end" > "start"));`);
    this.addSql(`create index "timeslot_resource_id_start_index" on "timeslot" ("resource_id", "start");`);
    this.addSql(`alter table "timeslot" add constraint "timeslot_crm_id_reference_unique" unique ("crm_id", "reference");`);

    this.addSql(`create table "resource_product" ("resource_id" uuid not null, "product_id" uuid not null, constraint "resource_product_pkey" primary key ("resource_id", "product_id"));`);

    this.addSql(`create table "booking_channel_setting" ("id" uuid not null, "resource_id" uuid not null, "channel_key" varchar(32) not null, "visible" boolean not null default true, "booking_process" varchar(16) not null default 'IMMEDIATE', "product_ids" jsonb null, "exclusive_product_ids" jsonb not null, "accepted_customer_ids" jsonb not null, constraint "booking_channel_setting_pkey" primary key ("id"));`);
    this.addSql(`alter table "booking_channel_setting" add constraint "booking_channel_setting_resource_id_channel_key_unique" unique ("resource_id", "channel_key");`);

    this.addSql(`create table "contact_channel" ("id" uuid not null, "profile_id" uuid not null, "type" varchar(16) not null, "label" varchar(255) null, "value" varchar(1024) not null, constraint "contact_channel_pkey" primary key ("id"));`);
    this.addSql(`alter table "contact_channel" add constraint "contact_channel_profile_id_type_unique" unique ("profile_id", "type");`);

    this.addSql(`create table "appointment" ("id" uuid not null, "crm_id" varchar(100) not null, "provider_id" uuid not null, "resource_id" uuid not null, "product_id" uuid null, "timeslot_id" uuid null, "reference" varchar(255) not null, "start" timestamptz not null, "end" timestamptz not null, "capacity" int not null default 0, "accept_bookings" boolean not null default false, "product_name" varchar(255) null, "contact_id" uuid null, "contact_profile_id" uuid null, "address" jsonb null, "price" jsonb null, "archived" boolean not null default false, "description" text null, "notes" text null, "series_id" varchar(64) null, "state" varchar(16) not null default 'ACTIVE', "created_at" timestamptz not null, constraint "appointment_pkey" primary key ("id"), constraint appointment_capacity_check check (capacity >= 0), constraint appointment_period_check check ("end" > "start"));`);
    this.addSql(`create index "appointment_series_id_index" on "appointment" ("series_id");`);
    this.addSql(`create index "appointment_resource_id_start_index" on "appointment" ("resource_id", "start");`);
    this.addSql(`alter table "appointment" add constraint "appointment_timeslot_start_unique" unique ("timeslot_id", "start");`);
    this.addSql(`alter table "appointment" add constraint "appointment_crm_id_reference_unique" unique ("crm_id", "reference");`);

    this.addSql(`create table "participation" ("id" uuid not null, "crm_id" varchar(100) not null, "appointment_id" uuid not null, "customer_id" uuid null, "reference" varchar(255) null, "placeholder_id" uuid not null, "state" varchar(16) not null, "expires_at" timestamptz null, "channel_key" varchar(32) null, "messages" jsonb null, "locale" varchar(8) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "participation_pkey" primary key ("id"));`);
    this.addSql(`create index "participation_state_expires_at_index" on "participation" ("state", "expires_at");`);
    this.addSql(`create index "participation_appointment_id_state_index" on "participation" ("appointment_id", "state");`);
    this.addSql(`create unique index "participation_customer_once_unique" on "participation" ("appointment_id", "customer_id") where "customer_id" is not null and "state" in ('RESERVED', 'REQUESTED', 'BOOKED');`);
    this.addSql(`alter table "participation" add constraint "participation_placeholder_id_unique" unique ("placeholder_id");`);
    this.addSql(`alter table "participation" add constraint "participation_crm_id_reference_unique" unique ("crm_id", "reference");`);

    this.addSql(`alter table "app_user" add constraint "app_user_crm_id_foreign" foreign key ("crm_id") references "crm_integration" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "account" add constraint "account_crm_id_foreign" foreign key ("crm_id") references "crm_integration" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "account" add constraint "account_owner_id_foreign" foreign key ("owner_id") references "app_user" ("id") on update cascade;`);

    this.addSql(`alter table "provider" add constraint "provider_crm_id_foreign" foreign key ("crm_id") references "crm_integration" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "provider" add constraint "provider_owner_id_foreign" foreign key ("owner_id") references "app_user" ("id") on update cascade;`);
    this.addSql(`alter table "provider" add constraint "provider_account_id_foreign" foreign key ("account_id") references "account" ("id") on update cascade;`);

    this.addSql(`alter table "staff_membership" add constraint "staff_membership_provider_id_foreign" foreign key ("provider_id") references "provider" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "staff_membership" add constraint "staff_membership_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "product" add constraint "product_crm_id_foreign" foreign key ("crm_id") references "crm_integration" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "product" add constraint "product_provider_id_foreign" foreign key ("provider_id") references "provider" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "customer" add constraint "customer_crm_id_foreign" foreign key ("crm_id") references "crm_integration" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "customer" add constraint "customer_provider_id_foreign" foreign key ("provider_id") references "provider" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "customer" add constraint "customer_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "contact_profile" add constraint "contact_profile_crm_id_foreign" foreign key ("crm_id") references "crm_integration" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "contact_profile" add constraint "contact_profile_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "contact_profile" add constraint "contact_profile_provider_id_foreign" foreign key ("provider_id") references "provider" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "resource" add constraint "resource_crm_id_foreign" foreign key ("crm_id") references "crm_integration" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "resource" add constraint "resource_provider_id_foreign" foreign key ("provider_id") references "provider" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "resource" add constraint "resource_contact_id_foreign" foreign key ("contact_id") references "app_user" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "resource" add constraint "resource_contact_profile_id_foreign" foreign key ("contact_profile_id") references "contact_profile" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "timeslot" add constraint "timeslot_crm_id_foreign" foreign key ("crm_id") references "crm_integration" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "timeslot" add constraint "timeslot_resource_id_foreign" foreign key ("resource_id") references "resource" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "resource_product" add constraint "resource_product_resource_id_foreign" foreign key ("resource_id") references "resource" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "resource_product" add constraint "resource_product_product_id_foreign" foreign key ("product_id") references "product" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "booking_channel_setting" add constraint "booking_channel_setting_resource_id_foreign" foreign key ("resource_id") references "resource" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "contact_channel" add constraint "contact_channel_profile_id_foreign" foreign key ("profile_id") references "contact_profile" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "appointment" add constraint "appointment_crm_id_foreign" foreign key ("crm_id") references "crm_integration" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "appointment" add constraint "appointment_provider_id_foreign" foreign key ("provider_id") references "provider" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "appointment" add constraint "appointment_resource_id_foreign" foreign key ("resource_id") references "resource" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "appointment" add constraint "appointment_product_id_foreign" foreign key ("product_id") references "product" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "appointment" add constraint "appointment_timeslot_id_foreign" foreign key ("timeslot_id") references "timeslot" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "appointment" add constraint "appointment_contact_id_foreign" foreign key ("contact_id") references "app_user" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "appointment" add constraint "appointment_contact_profile_id_foreign" foreign key ("contact_profile_id") references "contact_profile" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "participation" add constraint "participation_crm_id_foreign" foreign key ("crm_id") references "crm_integration" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "participation" add constraint "participation_appointment_id_foreign" foreign key ("appointment_id") references "appointment" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "participation" add constraint "participation_customer_id_foreign" foreign key ("customer_id") references "customer" ("id") on update cascade on delete set null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "app_user" drop constraint "app_user_crm_id_foreign";`);

    this.addSql(`alter table "account" drop constraint "account_crm_id_foreign";`);

    this.addSql(`alter table "provider" drop constraint "provider_crm_id_foreign";`);

    this.addSql(`alter table "product" drop constraint "product_crm_id_foreign";`);

    this.addSql(`alter table "customer" drop constraint "customer_crm_id_foreign";`);

    this.addSql(`alter table "contact_profile" drop constraint "contact_profile_crm_id_foreign";`);

    this.addSql(`alter table "resource" drop constraint "resource_crm_id_foreign";`);

    this.addSql(`alter table "timeslot" drop constraint "timeslot_crm_id_foreign";`);

    this.addSql(`alter table "appointment" drop constraint "appointment_crm_id_foreign";`);

    this.addSql(`alter table "participation" drop constraint "participation_crm_id_foreign";`);

    this.addSql(`alter table "account" drop constraint "account_owner_id_foreign";`);

    this.addSql(`alter table "provider" drop constraint "provider_owner_id_foreign";`);

    this.addSql(`alter table "staff_membership" drop constraint "staff_membership_user_id_foreign";`);

    this.addSql(`alter table "customer" drop constraint "customer_user_id_foreign";`);

    this.addSql(`alter table "contact_profile" drop constraint "contact_profile_user_id_foreign";`);

    this.addSql(`alter table "resource" drop constraint "resource_contact_id_foreign";`);

    this.addSql(`alter table "appointment" drop constraint "appointment_contact_id_foreign";`);

    this.addSql(`alter table "provider" drop constraint "provider_account_id_foreign";`);

    this.addSql(`alter table "staff_membership" drop constraint "staff_membership_provider_id_foreign";`);

    this.addSql(`alter table "product" drop constraint "product_provider_id_foreign";`);

    this.addSql(`alter table "customer" drop constraint "customer_provider_id_foreign";`);

    this.addSql(`alter table "contact_profile" drop constraint "contact_profile_provider_id_foreign";`);

    this.addSql(`alter table "resource" drop constraint "resource_provider_id_foreign";`);

    this.addSql(`alter table "appointment" drop constraint "appointment_provider_id_foreign";`);

    this.addSql(`alter table "resource_product" drop constraint "resource_product_product_id_foreign";`);

    this.addSql(`alter table "appointment" drop constraint "appointment_product_id_foreign";`);

    this.addSql(`alter table "participation" drop constraint "participation_customer_id_foreign";`);

    this.addSql(`alter table "resource" drop constraint "resource_contact_profile_id_foreign";`);

    this.addSql(`alter table "contact_channel" drop constraint "contact_channel_profile_id_foreign";`);

    this.addSql(`alter table "appointment" drop constraint "appointment_contact_profile_id_foreign";`);

    this.addSql(`alter table "timeslot" drop constraint "timeslot_resource_id_foreign";`);

    this.addSql(`alter table "resource_product" drop constraint "resource_product_resource_id_foreign";`);

    this.addSql(`alter table "booking_channel_setting" drop constraint "booking_channel_setting_resource_id_foreign";`);

    this.addSql(`alter table "appointment" drop constraint "appointment_resource_id_foreign";`);

    this.addSql(`alter table "appointment" drop constraint "appointment_timeslot_id_foreign";`);

    this.addSql(`alter table "participation" drop constraint "participation_appointment_id_foreign";`);

    this.addSql(`drop table if exists "crm_integration" cascade;`);

    this.addSql(`drop table if exists "outbox_message" cascade;`);

    this.addSql(`drop table if exists "app_user" cascade;`);

    this.addSql(`drop table if exists "account" cascade;`);

    this.addSql(`drop table if exists "provider" cascade;`);

    this.addSql(`drop table if exists "staff_membership" cascade;`);

    this.addSql(`drop table if exists "product" cascade;`);

    this.addSql(`drop table if exists "customer" cascade;`);

    this.addSql(`drop table if exists "contact_profile" cascade;`);

    this.addSql(`drop table if exists "resource" cascade;`);

    this.addSql(`drop table if exists "timeslot" cascade;`);

    this.addSql(`drop table if exists "resource_product" cascade;`);

    this.addSql(`drop table if exists "booking_channel_setting" cascade;`);

    this.addSql(`drop table if exists "contact_channel" cascade;`);

    this.addSql(`drop table if exists "appointment" cascade;`);

    this.addSql(`drop table if exists "participation" cascade;`);
  }

}
