import type { Context } from '../kernel/context.js';
import type { Appointment } from './appointment.entity.js';

/**
 * Places taken per appointment at `now`: REQUESTED and BOOKED participations
 * plus holds that have not expired. One query for many appointments.
 */
export async function occupancyOf(ctx: Context, appointmentIds: string[]): Promise<Map<string, number>> {
  if (!appointmentIds.length) return new Map();
  const rows = await ctx.em.execute<{ appointment_id: string; taken: string }[]>(
    `select appointment_id, count(*) as taken from participation
      where appointment_id in (${appointmentIds.map(() => '?').join(',')})
        and (state in ('REQUESTED', 'BOOKED') or (state = 'RESERVED' and expires_at > ?))
      group by appointment_id`,
    [...appointmentIds, ctx.clock.now()],
  );
  return new Map(rows.map((row) => [row.appointment_id, Number(row.taken)]));
}

/** Places still free in an appointment: capacity minus booked, requested and live (unexpired) holds. */
export async function capacityLeft(ctx: Context, appointment: Appointment): Promise<number> {
  const taken = (await occupancyOf(ctx, [appointment.id])).get(appointment.id) ?? 0;
  return Math.max(0, appointment.capacity - taken);
}
