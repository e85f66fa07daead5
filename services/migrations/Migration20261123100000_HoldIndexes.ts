import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 10, booking write path: every claim reads the earliest expiry of
 * its appointment's holds. With an index on (state, expires_at) over all
 * participations, PostgreSQL answered that min() by walking the index of all
 * live holds in expiry order until one belonged to the appointment: more
 * work the more consumers hold places anywhere. Holds get an index of their
 * own, per appointment and expiry, that holds live holds only (a booked or
 * cancelled participation has no entry; the hold sweep reads it too). The
 * partial appointment index of live participations duplicated
 * (appointment_id, state) and goes: one index entry fewer per participation.
 */
export class Migration20261123100000_HoldIndexes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "participation_hold_expiry_index" on "participation" ("appointment_id", "expires_at") where "state" = 'RESERVED';`);
    this.addSql(`drop index if exists "participation_state_expires_at_index";`);
    this.addSql(`drop index if exists "participation_appointment_id_index";`);
  }

  override async down(): Promise<void> {
    this.addSql(`create index if not exists "participation_appointment_id_index" on "participation" ("appointment_id") where "state" in ('RESERVED', 'REQUESTED', 'BOOKED');`);
    this.addSql(`create index if not exists "participation_state_expires_at_index" on "participation" ("state", "expires_at");`);
    this.addSql(`drop index if exists "participation_hold_expiry_index";`);
  }
}
