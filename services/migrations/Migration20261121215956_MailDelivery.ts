import { Migration } from '@mikro-orm/migrations';

export class Migration20261121215956_MailDelivery extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "mail_delivery" ("id" bigserial primary key, "template" varchar(64) not null, "recipient" varchar(320) not null, "participation_id" uuid null, "status" varchar(16) not null, "attempts" int not null default 0, "last_error" text null, "message_id" varchar(255) null, "updated_at" timestamptz not null);`);
    this.addSql(`create index "mail_delivery_participation_id_index" on "mail_delivery" ("participation_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "mail_delivery" cascade;`);
  }

}
