import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Knex } from '@mikro-orm/knex';
import type { Config } from './config.js';

/** What runs a statement: the request's (or transaction's) EntityManager, and whether named statements are on. */
export interface SqlContext {
  em: EntityManager;
  config: Pick<Config, 'databasePool'>;
}

/**
 * Runs one SQL statement of a hot path with bound parameters (`?`
 * placeholders) on the EntityManager's connection, inside its transaction
 * if it has one, and answers the rows as PostgreSQL sent them (timestamps
 * as text, as em.execute does).
 *
 * Unlike em.execute, which writes the values into the SQL text, the values
 * travel apart from it, and the statement is prepared once per pooled
 * connection under a name derived from its text: PostgreSQL parses and plans
 * it once instead of on every call. On the booking path planning cost as
 * much database CPU as running the statements. Behind a pooler that cannot
 * keep prepared statements apart (PgBouncer before 1.21 in transaction
 * mode), DATABASE_PREPARED_STATEMENTS=false keeps the bound values but
 * leaves the statement unnamed.
 *
 * Parameter types are inferred by PostgreSQL from where a value is used;
 * where nothing says (a bare `?` in a select list), cast it (`?::uuid`).
 * An array value is one parameter (a PostgreSQL array: `= any(?::uuid[])`),
 * not a list.
 */
export async function sql<T extends object = Record<string, unknown>>(ctx: SqlContext, text: string, params: readonly unknown[] = []): Promise<T[]> {
  const em = ctx.em;
  // Straight to the pooled pg client (the transaction's, if any): knex's query builder and runner cost as much
  // gateway CPU per booking as the statements' own round trips.
  const client = (em.getTransactionContext<Knex.Transaction>() ?? em.getKnex()).client as unknown as PooledClient;
  const statement = statementOf(text, params.length);
  const connection = await client.acquireConnection();
  try {
    const query = ctx.config.databasePool.preparedStatements ? { name: statement.name, text: statement.text, values: params } : { text: statement.text, values: params };
    return (await connection.query<T>(query)).rows;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === '26000' || code === '42P05') {
      // "prepared statement … does not exist / already exists": a pooler shares server connections between clients.
      (error as Error).message += ' (behind PgBouncer in transaction mode before 1.21, set DATABASE_PREPARED_STATEMENTS=false)';
    }
    // The same exception classes (with code and constraint) as em.execute throws.
    throw em.getDriver().convertException(error as Error);
  } finally {
    await client.releaseConnection(connection);
  }
}

/** knex's client as far as it is used here: its pool (or, in a transaction, the transaction's one connection). */
interface PooledClient {
  acquireConnection(): Promise<{ query<R>(config: { name?: string; text: string; values: readonly unknown[] }): Promise<{ rows: R[] }> }>;
  releaseConnection(connection: unknown): Promise<unknown>;
}

interface Statement {
  name: string;
  /** The text with `$1, $2, …` for its `?`s. */
  text: string;
  placeholders: number;
}

const statements = new Map<string, Statement>();
/** Statement texts are constants of the code (with `?` lists of bounded length), so this map stays small; past the cap a text is converted afresh. */
const MAX_STATEMENTS = 2_000;

function statementOf(text: string, values: number): Statement {
  let statement = statements.get(text);
  if (!statement) {
    let n = 0;
    const positional = text.replace(/\?/g, () => `$${++n}`);
    statement = { name: statementName(text), text: positional, placeholders: n };
    if (statements.size < MAX_STATEMENTS) statements.set(text, statement);
  }
  // A mistake of the code, caught before PostgreSQL would answer with a less telling error.
  if (statement.placeholders !== values) throw new Error(`sql: ${values} values for ${statement.placeholders} placeholders in: ${text.slice(0, 120)}`);
  return statement;
}

/** A stable name per statement text: the same on every connection, unique in practice. */
export function statementName(text: string): string {
  return `s${createHash('sha1').update(text).digest('base64url').slice(0, 22)}`;
}
