import pg from 'pg';

/** A small pool on the bench database, for seeding past data, the scratch table of B1 and the checks of P2 and P5. */
export function benchPool(connectionString: string): pg.Pool {
  return new pg.Pool({ connectionString, max: 4, statement_timeout: 60_000 });
}

/** Columns of a table that an INSERT may set (generated columns excluded), in table order. */
export async function insertableColumns(db: pg.Pool, table: string): Promise<string[]> {
  const { rows } = await db.query<{ column_name: string }>(
    `select column_name from information_schema.columns
      where table_schema = current_schema() and table_name = $1 and is_generated = 'NEVER'
      order by ordinal_position`,
    [table],
  );
  if (!rows.length) throw new Error(`table ${table} not found`);
  return rows.map((row) => row.column_name);
}

export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;
