import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 10, booking write path: every booking updates its appointment's
 * `places_taken` (the participation trigger). Packed pages left no room for
 * the new row version on its page, so 83 % of those updates were not HOT and
 * wrote a new entry into each of the appointment's ten indexes, two of them
 * gist. With 30 % of each page kept free, the update stays on its page and
 * touches no index. Two index entries per new appointment go too: the
 * timeslot index duplicated the leading column of (timeslot_id, start), and
 * the series index now holds only appointments of a series.
 */
export class Migration20261123073000_HotAppointmentUpdates extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "appointment" set (fillfactor = 70);`);
    this.addSql(`drop index if exists "appointment_timeslot_id_index";`);
    this.addSql(`drop index if exists "appointment_series_id_index";`);
    this.addSql(`create index "appointment_series_id_index" on "appointment" ("series_id") where "series_id" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "appointment" reset (fillfactor);`);
    this.addSql(`create index if not exists "appointment_timeslot_id_index" on "appointment" ("timeslot_id") where "timeslot_id" is not null;`);
    this.addSql(`drop index if exists "appointment_series_id_index";`);
    this.addSql(`create index "appointment_series_id_index" on "appointment" ("series_id");`);
  }
}
