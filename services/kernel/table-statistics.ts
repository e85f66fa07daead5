import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * autovacuum's own rule for when a table is due for ANALYZE (its defaults
 * autovacuum_analyze_threshold 50 and autovacuum_analyze_scale_factor 0.1):
 * more rows changed since the last ANALYZE than 50 + 10 % of the table.
 */
export const ANALYZE_THRESHOLD_ROWS = 50;
export const ANALYZE_SCALE_FACTOR = 0.1;

/** How often the worker's table-statistics job looks for such tables (once per interval across all workers). */
export const TABLE_STATISTICS_INTERVAL_MS = 15_000;

/** Whether PostgreSQL's autovacuum runs (and so keeps the planner's statistics current). */
export async function autovacuumOn(em: EntityManager): Promise<boolean> {
  const [row] = await em.execute<{ on: boolean }[]>(`select current_setting('autovacuum') = 'on' as on`);
  return row?.on ?? true;
}

/**
 * Where autovacuum is off, ANALYZEs the tables of the service's schema that
 * autovacuum would have analyzed by now, and answers their names (none when
 * autovacuum is on: it does this itself).
 *
 * Why the service cares: its hot statements are prepared once per
 * connection (kernel/sql.ts), and PostgreSQL keeps a prepared statement's
 * generic plan until the statistics of its tables change. A plan made while
 * a table was nearly empty (a new database being filled, statistics never
 * taken) can read a whole index per booking once the table has grown: seen
 * as a row lock by primary key taking 10 ms through the wrong index. Fresh
 * statistics also invalidate such plans everywhere at once.
 *
 * Only ANALYZE (a sample, cheap); dead rows are left to VACUUM, which
 * remains the operator's business (see README "Operating").
 */
export async function analyzeStaleTables(em: EntityManager, options: { evenWithAutovacuum?: boolean } = {}): Promise<string[]> {
  if (!options.evenWithAutovacuum && (await autovacuumOn(em))) return [];
  const due = await em.execute<{ name: string }[]>(
    `select quote_ident(s.relname) as name
       from pg_stat_user_tables s join pg_class c on c.oid = s.relid
      where s.schemaname = current_schema()
        and s.n_mod_since_analyze > ? + ? * greatest(c.reltuples, 0)
      order by s.n_mod_since_analyze desc`,
    [ANALYZE_THRESHOLD_ROWS, ANALYZE_SCALE_FACTOR],
  );
  for (const { name } of due) await em.execute(`analyze ${name}`);
  return due.map((row) => row.name);
}
