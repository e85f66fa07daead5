import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 12, hardening:
 * - timeslots of one resource may not overlap, enforced by PostgreSQL (two
 *   parallel creates or updates could both pass the service's check);
 * - a hold records the client IP that placed it, so the cap on live holds
 *   per client and resource is counted by PostgreSQL.
 */
export class Migration20261123020000_Hardening extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create extension if not exists btree_gist;`);
    this.addSql(
      `alter table "timeslot" add constraint "timeslot_resource_no_overlap" exclude using gist ("resource_id" with =, tstzrange("start", "end") with &&);`,
    );
    this.addSql(`alter table "participation" add column "client_ip" varchar(64) null;`);
    this.addSql(
      `create index "participation_live_hold_client_index" on "participation" ("client_ip", "expires_at") where "state" = 'RESERVED' and "client_ip" is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "participation_live_hold_client_index";`);
    this.addSql(`alter table "participation" drop column if exists "client_ip";`);
    this.addSql(`alter table "timeslot" drop constraint if exists "timeslot_resource_no_overlap";`);
  }
}
