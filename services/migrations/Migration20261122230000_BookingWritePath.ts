import { Migration } from '@mikro-orm/migrations';

/**
 * The database enforces what a per-resource lock enforced before:
 * - every appointment carries its blocked period, [start − lead time,
 *   end + follow-up time] of its product, kept by a trigger so no writer can
 *   forget it (a product's later change does not move booked appointments);
 * - appointments made by the booking flow (timeslot_id set) of one resource
 *   never have overlapping blocked periods while active: an exclusion
 *   constraint, so two first bookings of neighbouring slots cannot both
 *   commit, whichever gateway runs them;
 * - indexes by end time, so "upcoming" reads skip a resource's past;
 * - a commit that wrote outbox rows wakes the relay by itself (NOTIFY from a
 *   statement trigger is delivered on commit), saving writers a round trip;
 * - every appointment counts its places taken (`places_taken`: RESERVED,
 *   REQUESTED and BOOKED participations, holds included until they are
 *   removed), kept by a trigger for every writer, so the booking flow gives
 *   a place with one guarded statement under the appointment's row lock.
 */
export class Migration20261122230000_BookingWritePath extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create extension if not exists btree_gist;`);
    this.addSql(`alter table "appointment" add column "blocked_from" timestamptz null, add column "blocked_to" timestamptz null;`);
    this.addSql(`
      create or replace function appointment_blocked_period() returns trigger language plpgsql as $$
      declare
        lead_minutes int := 0;
        follow_up_minutes int := 0;
      begin
        if new.product_id is not null then
          select coalesce(p.lead_time_minutes, 0), coalesce(p.follow_up_time_minutes, 0)
            into lead_minutes, follow_up_minutes
            from product p where p.id = new.product_id;
        end if;
        new.blocked_from := new.start - make_interval(mins => coalesce(lead_minutes, 0));
        new.blocked_to := new."end" + make_interval(mins => coalesce(follow_up_minutes, 0));
        return new;
      end
      $$;`);
    this.addSql(`
      create trigger appointment_blocked_period
        before insert or update of "start", "end", "product_id", "blocked_from", "blocked_to" on "appointment"
        for each row execute function appointment_blocked_period();`);
    this.addSql(`update "appointment" set "start" = "start";`);
    this.addSql(`alter table "appointment" alter column "blocked_from" set not null, alter column "blocked_to" set not null;`);
    this.addSql(`
      alter table "appointment" add constraint "appointment_lot_no_overlap"
        exclude using gist ("resource_id" with =, tstzrange("blocked_from", "blocked_to") with &&)
        where ("timeslot_id" is not null and "state" = 'ACTIVE' and not "archived");`);
    this.addSql(`create index "appointment_resource_id_end_index" on "appointment" ("resource_id", "end");`);
    // Busy periods around a slot, for the claim of its first booking.
    this.addSql(`create index "appointment_active_blocked_index" on "appointment" using gist ("resource_id", tstzrange("blocked_from", "blocked_to")) where "state" = 'ACTIVE' and not "archived";`);
    this.addSql(`create index "appointment_timeslot_id_index" on "appointment" ("timeslot_id") where "timeslot_id" is not null;`);
    this.addSql(`create index "timeslot_resource_id_end_index" on "timeslot" ("resource_id", "end");`);
    this.addSql(`
      create or replace function outbox_message_notify() returns trigger language plpgsql as $$
      begin
        perform pg_notify('outbox_pending', '');
        return null;
      end
      $$;`);
    this.addSql(`create trigger outbox_message_notify after insert on "outbox_message" for each statement execute function outbox_message_notify();`);
    this.addSql(`alter table "appointment" add column "places_taken" int not null default 0;`);
    this.addSql(`
      update "appointment" a set "places_taken" = c.n
        from (select appointment_id, count(*)::int as n from participation where state in ('RESERVED', 'REQUESTED', 'BOOKED') group by appointment_id) c
       where c.appointment_id = a.id;`);
    this.addSql(`
      create or replace function participation_places() returns trigger language plpgsql as $$
      declare
        before_count int := 0;
        after_count int := 0;
      begin
        if tg_op in ('UPDATE', 'DELETE') and old.state in ('RESERVED', 'REQUESTED', 'BOOKED') then before_count := 1; end if;
        if tg_op in ('INSERT', 'UPDATE') and new.state in ('RESERVED', 'REQUESTED', 'BOOKED') then after_count := 1; end if;
        if tg_op = 'UPDATE' and old.appointment_id is distinct from new.appointment_id then
          if before_count = 1 then update appointment set places_taken = places_taken - 1 where id = old.appointment_id; end if;
          if after_count = 1 then update appointment set places_taken = places_taken + 1 where id = new.appointment_id; end if;
        elsif after_count <> before_count then
          update appointment set places_taken = places_taken + after_count - before_count
           where id = case when tg_op = 'DELETE' then old.appointment_id else new.appointment_id end;
        end if;
        return null;
      end
      $$;`);
    this.addSql(`
      create trigger participation_places after insert or delete or update of "state", "appointment_id" on "participation"
        for each row execute function participation_places();`);
    this.addSql(`create index "participation_appointment_id_index" on "participation" ("appointment_id") where "state" in ('RESERVED', 'REQUESTED', 'BOOKED');`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists participation_places on "participation";`);
    this.addSql(`drop function if exists participation_places();`);
    this.addSql(`alter table "appointment" drop column if exists "places_taken";`);
    this.addSql(`drop trigger if exists outbox_message_notify on "outbox_message";`);
    this.addSql(`drop function if exists outbox_message_notify();`);
    this.addSql(`drop index if exists "participation_appointment_id_index";`);
    this.addSql(`drop index if exists "timeslot_resource_id_end_index";`);
    this.addSql(`drop index if exists "appointment_timeslot_id_index";`);
    this.addSql(`drop index if exists "appointment_active_blocked_index";`);
    this.addSql(`drop index if exists "appointment_resource_id_end_index";`);
    this.addSql(`alter table "appointment" drop constraint if exists "appointment_lot_no_overlap";`);
    this.addSql(`drop trigger if exists appointment_blocked_period on "appointment";`);
    this.addSql(`drop function if exists appointment_blocked_period();`);
    this.addSql(`alter table "appointment" drop column if exists "blocked_from", drop column if exists "blocked_to";`);
  }
}
