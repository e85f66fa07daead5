import { Migration } from '@mikro-orm/migrations';

export class Migration20261123013000_Webhooks extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "webhook" ("id" uuid not null, "crm_id" varchar(100) not null, "url" varchar(2048) not null, "events" jsonb not null, "description" varchar(255) null, "secret" varchar(128) not null, "created_at" timestamptz not null, constraint "webhook_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_crm_id_index" on "webhook" ("crm_id");`);
    this.addSql(`alter table "webhook" add constraint "webhook_crm_id_foreign" foreign key ("crm_id") references "crm_integration" ("id") on update cascade on delete cascade;`);

    this.addSql(`create table "webhook_delivery" ("id" uuid not null, "webhook_id" uuid not null, "crm_id" varchar(100) not null, "event_id" bigint not null, "event_type" varchar(64) not null, "body" text not null, "status" varchar(16) not null, "attempts" int not null default 0, "attempt_log" jsonb not null default '[]', "next_attempt_at" timestamptz null, "locked_until" timestamptz null, "created_at" timestamptz not null, "delivered_at" timestamptz null, constraint "webhook_delivery_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_delivery_webhook_id_created_at_index" on "webhook_delivery" ("webhook_id", "created_at");`);
    this.addSql(`create index "webhook_delivery_created_at_index" on "webhook_delivery" ("created_at");`);
    // One delivery per webhook and event, so a relay that hands the same outbox row over twice fans it out once.
    this.addSql(`alter table "webhook_delivery" add constraint "webhook_delivery_webhook_id_event_id_unique" unique ("webhook_id", "event_id");`);
    this.addSql(`create index "webhook_delivery_pending_index" on "webhook_delivery" ("next_attempt_at") where "status" in ('PENDING', 'RETRYING');`);
    this.addSql(`alter table "webhook_delivery" add constraint "webhook_delivery_webhook_id_foreign" foreign key ("webhook_id") references "webhook" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "webhook_delivery" cascade;`);
    this.addSql(`drop table if exists "webhook" cascade;`);
  }

}
