import { Migration } from '@mikro-orm/migrations';

/**
 * A consumer booking fills the missing name and mobile of the user it is
 * attached to unless that user is a provider's staff or a resource's
 * contact (shown to the public): the booking's consumer lookup asks both
 * for the user it found. Indexed, so that question costs two index probes
 * however many providers and resources a database holds.
 */
export class Migration20261124090000_PublicUsers extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index if not exists "staff_membership_user_id_index" on "staff_membership" ("user_id");`);
    this.addSql(`create index if not exists "resource_contact_id_index" on "resource" ("contact_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "resource_contact_id_index";`);
    this.addSql(`drop index if exists "staff_membership_user_id_index";`);
  }
}
