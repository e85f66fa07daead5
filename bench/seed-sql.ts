import type pg from 'pg';
import { insertableColumns, quoteIdent } from './lib/db.js';

/**
 * Rows the booking flow cannot make (bookings in the past) or cannot make in
 * time: written with SQL as copies of rows the API made, with only the
 * identity, time and parent columns replaced. Copying whole rows keeps every
 * other column (and whatever columns the schema gains) as the service writes
 * it; ON CONFLICT DO NOTHING skips a slot that is already taken.
 */

export interface BookingTemplate {
  appointmentId: string;
  participationId: string;
}

/** A booking made through the API on the resource: its appointment and BOOKED participation. */
export async function findBookingTemplate(db: pg.Pool, resourceId: string): Promise<BookingTemplate | null> {
  const { rows } = await db.query<{ appointment_id: string; participation_id: string }>(
    `select a.id as appointment_id, p.id as participation_id
       from appointment a join participation p on p.appointment_id = a.id
      where a.resource_id = $1 and a.state = 'ACTIVE' and p.state = 'BOOKED'
      order by a.start limit 1`,
    [resourceId],
  );
  return rows[0] ? { appointmentId: rows[0].appointment_id, participationId: rows[0].participation_id } : null;
}

export type BookingTargets =
  /** Every other slot (the 1st, 3rd, …) of each of the resource's timeslots that has no appointment yet. */
  | { kind: 'evenSlotsOf'; resourceId: string; pastOnly?: boolean }
  /** The slots booked on another resource, on this resource's timeslot that starts at the same instant. */
  | { kind: 'sameSlotsAs'; resourceId: string; sourceResourceId: string };

function targetsSql(targets: BookingTargets): { sql: string; params: unknown[] } {
  if (targets.kind === 'evenSlotsOf') {
    return {
      sql: `select t.resource_id, t.id as timeslot_id,
                   t.start + make_interval(mins => k * t.raster) as start,
                   t.start + make_interval(mins => (k + 1) * t.raster) as "end"
              from timeslot t cross join generate_series(0, 10000, 2) k
             where t.resource_id = $3 and ${targets.pastOnly ? 't."end" <= now()' : 'true'}
               and t.start + make_interval(mins => (k + 1) * t.raster) <= t."end"
               and not exists (select 1 from appointment x where x.timeslot_id = t.id and x.start = t.start + make_interval(mins => k * t.raster))`,
      params: [targets.resourceId],
    };
  }
  return {
    sql: `select th.resource_id, th.id as timeslot_id, a.start, a."end"
            from appointment a
            join timeslot ts on ts.id = a.timeslot_id
            join timeslot th on th.resource_id = $3 and th.start = ts.start
           where a.resource_id = $4 and a.state = 'ACTIVE'
             and exists (select 1 from participation p where p.appointment_id = a.id and p.state in ('BOOKED', 'REQUESTED'))`,
    params: [targets.resourceId, targets.sourceResourceId],
  };
}

const list = (columns: string[], alias?: string) => columns.map((c) => (alias ? `${alias}.${quoteIdent(c)}` : quoteIdent(c))).join(', ');

/** Copies the template booking (appointment + participation) onto every target slot; returns how many were written. */
export async function cloneBookings(db: pg.Pool, template: BookingTemplate, targets: BookingTargets): Promise<number> {
  const appointmentColumns = await insertableColumns(db, 'appointment');
  const participationColumns = await insertableColumns(db, 'participation');
  const { sql: targetSql, params } = targetsSql(targets);
  const result = await db.query(
    `with targets as (${targetSql}),
     copied as (
       insert into appointment (${list(appointmentColumns)})
       select ${list(appointmentColumns, 'r')}
         from appointment tpl cross join targets t
         cross join lateral jsonb_populate_record(null::appointment, to_jsonb(tpl) || jsonb_build_object(
           'id', gen_random_uuid(), 'resource_id', t.resource_id, 'timeslot_id', t.timeslot_id,
           'start', t.start, 'end', t."end", 'reference', 'bench-' || gen_random_uuid(), 'created_at', least(now(), t.start))) r
        where tpl.id = $1
       on conflict do nothing
       returning id, created_at
     )
     insert into participation (${list(participationColumns)})
     select ${list(participationColumns, 'r')}
       from participation tpl cross join copied c
       cross join lateral jsonb_populate_record(null::participation, to_jsonb(tpl) || jsonb_build_object(
         'id', gen_random_uuid(), 'appointment_id', c.id, 'placeholder_id', gen_random_uuid(),
         'reference', case when tpl.reference is null then null else 'bench-' || gen_random_uuid() end,
         'created_at', c.created_at, 'updated_at', c.created_at)) r
      where tpl.id = $2`,
    [template.appointmentId, template.participationId, ...params],
  );
  return result.rowCount ?? 0;
}

/** Copies the resource's first timeslot onto each of the `days` days before `today`, same wall-clock window in `zone`. */
export async function clonePastTimeslots(db: pg.Pool, resourceId: string, today: string, days: number, zone: string): Promise<number> {
  const columns = await insertableColumns(db, 'timeslot');
  const result = await db.query(
    `with tpl as (select * from timeslot where resource_id = $1 order by start limit 1)
     insert into timeslot (${list(columns)})
     select ${list(columns, 'r')}
       from tpl cross join generate_series(1, $3::int) n
       cross join lateral (select ($2::date - n) as day) d
       cross join lateral jsonb_populate_record(null::timeslot, to_jsonb(tpl) || jsonb_build_object(
         'id', gen_random_uuid(), 'reference', 'bench-past-' || n || '-' || tpl.reference,
         'start', (d.day + (tpl.start at time zone $4)::time) at time zone $4,
         'end', (d.day + (tpl."end" at time zone $4)::time) at time zone $4,
         'created_at', (d.day - 30)::timestamp at time zone $4)) r`,
    [resourceId, today, days, zone],
  );
  return result.rowCount ?? 0;
}
