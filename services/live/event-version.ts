import type { Context } from '../kernel/context.js';

/** PostgreSQL's clock in microseconds: the version stamp of capacity events, for statements that stamp their own. */
export const EVENT_VERSION_SQL = '(extract(epoch from clock_timestamp()) * 1000000)::bigint';

/**
 * The version stamp of a capacity event: PostgreSQL's clock, read inside the
 * transaction after the lock of the change was taken, so later changes of
 * the same slot carry larger values whichever gateway or worker made them.
 */
export async function eventVersion(ctx: Context): Promise<number> {
  const [row] = await ctx.em.execute<{ version: string }[]>(`select ${EVENT_VERSION_SQL} as version`);
  return Number(row!.version);
}

/**
 * The version stamp (see `eventVersion`) and whether the current transaction
 * inserted or updated the appointment row (its xmin is this transaction's
 * id; row locks such as FOR UPDATE leave xmin alone). Tells a capacity
 * announcement whether the appointment itself appeared or changed (then the
 * slots around it may change too) or only its participations did.
 */
export async function versionOfAppointmentChange(ctx: Context, appointmentId: string): Promise<{ version: number; written: boolean }> {
  const [row] = await ctx.em.execute<{ version: string; written: boolean }[]>(
    `select ${EVENT_VERSION_SQL} as version,
            exists (select 1 from appointment where id = ? and xmin = pg_current_xact_id()::xid) as written`,
    [appointmentId],
  );
  return { version: Number(row!.version), written: row!.written === true };
}
