import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 10, booking write path: every consumer booking looks up the
 * provider's customer by the consumer's user, else by e-mail (consumer.ts).
 * Without these indexes both were sequential scans of all customers (0.9 ms
 * per booking with 1,500 customers, growing with every one).
 */
export class Migration20261123070000_CustomerLookups extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "customer_provider_id_user_id_index" on "customer" ("provider_id", "user_id");`);
    this.addSql(`create index "customer_provider_id_email_index" on "customer" ("provider_id", "email");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "customer_provider_id_user_id_index";`);
    this.addSql(`drop index if exists "customer_provider_id_email_index";`);
  }
}
