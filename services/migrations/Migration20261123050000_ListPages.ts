import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 14, cursor pagination: GraphQL's `appointments` reads a provider's
 * appointments a page at a time in (start, reference) order from a cursor;
 * without this index every page read and sorted all of them (there was no
 * index on provider_id at all).
 */
export class Migration20261123050000_ListPages extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "appointment_provider_id_start_reference_index" on "appointment" ("provider_id", "start", "reference");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "appointment_provider_id_start_reference_index";`);
  }
}
