import { createHash } from 'node:crypto';
import type { EntityDictionary, EntityName, Primary } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Knex } from '@mikro-orm/knex';
import pg from 'pg';
import type { Config } from './config.js';

/** What runs a statement: the request's (or transaction's) EntityManager, and whether named statements are on. */
export interface SqlContext {
  em: EntityManager;
  config: Pick<Config, 'databasePool'>;
  /** A transaction of inSqlTransaction: its statements run on its connection, BEGIN and COMMIT sent with them. */
  sqlTransaction?: SqlTransaction;
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
export async function sql<T extends object = Record<string, unknown>>(
  ctx: SqlContext,
  text: string,
  params: readonly unknown[] = [],
  options: { commit?: boolean; shared?: boolean } = {},
): Promise<T[]> {
  const em = ctx.em;
  if (ctx.sqlTransaction) {
    const statement = statementOf(text, params.length);
    try {
      return await ctx.sqlTransaction.run<T>(statement, params, ctx.config.databasePool.preparedStatements, options.commit ?? false);
    } catch (error) {
      throw em.getDriver().convertException(explained(error as Error));
    }
  }
  // Straight to the pooled pg client (the transaction's, if any): knex's query builder and runner cost as much
  // gateway CPU per booking as the statements' own round trips.
  const transaction = em.getTransactionContext<Knex.Transaction>();
  const client = (transaction ?? em.getKnex()).client as unknown as PooledClient;
  const statement = statementOf(text, params.length);
  if (options.shared && !transaction) return sharedRead<T>(ctx, client, statement, params);
  return queryOn<T>(ctx, client, await client.acquireConnection(), statement, params);
}

/** Runs a statement on a connection of the pool and gives the connection back. */
async function queryOn<T>(ctx: SqlContext, client: PooledClient, connection: PooledConnection, statement: Statement, params: readonly unknown[]): Promise<T[]> {
  try {
    const query = ctx.config.databasePool.preparedStatements ? { name: statement.name, text: statement.text, values: params } : { text: statement.text, values: params };
    return (await connection.query<T>(query)).rows;
  } catch (error) {
    // The same exception classes (with code and constraint) as em.execute throws.
    throw ctx.em.getDriver().convertException(explained(error as Error));
  } finally {
    await client.releaseConnection(connection);
  }
}

/** Shared reads waiting for a connection, per pool: key → the read's answer. */
const waitingReads = new WeakMap<PooledClient, Map<string, Promise<unknown[]>>>();

/**
 * `sql(…, { shared: true })` outside a transaction: callers that ask for the
 * same statement with the same values while an earlier caller's read still
 * waits for a pooled connection get that read's answer, one round trip for
 * all of them. Once the read has its connection it takes no one else: its
 * snapshot is then taken after every caller that shares it had asked, so no
 * caller sees an older state than a read of its own would have. Under a
 * burst (many bookings of one calendar) the booking scope is read once per
 * free connection instead of once per request. The rows are shared: callers
 * must not change them.
 */
function sharedRead<T>(ctx: SqlContext, client: PooledClient, statement: Statement, params: readonly unknown[]): Promise<T[]> {
  let waiting = waitingReads.get(client);
  if (!waiting) waitingReads.set(client, (waiting = new Map()));
  const key = `${statement.name}:${JSON.stringify(params)}`;
  const queued = waiting.get(key);
  if (queued) return queued as Promise<T[]>;
  const read: Promise<T[]> = client
    .acquireConnection()
    // From here on (a connection, or none to be had) later callers read for themselves.
    .finally(() => waiting.get(key) === read && waiting.delete(key))
    .then((connection) => queryOn<T>(ctx, client, connection, statement, params));
  waiting.set(key, read);
  return read;
}

/**
 * The first row of a plain SELECT (`?` placeholders, in the EntityManager's
 * transaction if it has one; the primary key in a column `id`) as an
 * entity of that EntityManager, or null. For the lookups nearly every
 * request makes (the CRM by key, the provider by reference): em.findOne's
 * query building cost the gateway about as much again as the query. An
 * entity the EntityManager already holds is answered as it is (changes not
 * yet flushed kept, as em.findOne keeps them; em.map would overwrite them
 * with the row); unlike em.findOne, nothing is flushed before the read.
 */
export async function findOneMapped<T extends object>(em: EntityManager, entity: EntityName<T>, select: string, params: unknown[]): Promise<T | null> {
  const [row] = await em.execute<(EntityDictionary<T> & { id: string })[]>(select, params);
  if (!row) return null;
  const managed = em.getUnitOfWork().getById<T>(em.getMetadata().get(entity).className, row.id as Primary<T>);
  return managed ?? em.map(entity, row);
}

function explained(error: Error): Error {
  const code = (error as { code?: string }).code;
  if (code === '26000' || code === '42P05') {
    // "prepared statement … does not exist / already exists": a pooler shares server connections between clients.
    error.message += ' (behind PgBouncer in transaction mode before 1.21, set DATABASE_PREPARED_STATEMENTS=false)';
  }
  return error;
}

/**
 * Runs `work` in a transaction whose statements are all sent through
 * `sql()` on one pooled connection, without the ORM: BEGIN travels with the
 * first statement and COMMIT with the statement `sql()` is told is the last
 * (`{ commit: true }`), in the same write and under one Sync. A booking's
 * transaction thus costs no round trip of its own, and the row locks its
 * last statement takes are released the moment that statement ends, not a
 * round trip through a busy gateway later. If `work` returns without such
 * a statement, COMMIT is sent then; if it throws, ROLLBACK.
 *
 * The EntityManager of `tx` is the caller's, outside the transaction: `work`
 * may read through it, but every write must be a `sql()` statement.
 */
export async function inSqlTransaction<C extends SqlContext, T>(ctx: C, work: (tx: C) => Promise<T>): Promise<T> {
  const client = ctx.em.getKnex().client as unknown as PooledClient;
  const connection = (await client.acquireConnection()) as unknown as PgConnection;
  const transaction = new SqlTransaction(connection);
  try {
    const value = await work({ ...ctx, sqlTransaction: transaction });
    await transaction.end('COMMIT');
    return value;
  } catch (error) {
    await transaction.end('ROLLBACK').catch(() => {
      // The connection is unusable (it was lost): knex's pool must not hand it out again.
      (connection as { __knex__disposed?: unknown }).__knex__disposed = error;
      connection.end().catch(() => undefined);
    });
    throw error;
  } finally {
    await client.releaseConnection(connection);
  }
}

interface PgConnection {
  query(query: pg.Query): unknown;
  query(text: string): Promise<unknown>;
  end(): Promise<void>;
}

/** One transaction of inSqlTransaction: nothing sent yet, open, or ended (by a pipelined COMMIT, or a failure). */
export class SqlTransaction {
  private state: 'new' | 'open' | 'committed' | 'failed' = 'new';

  constructor(private readonly connection: PgConnection) {}

  async run<T>(statement: Statement, params: readonly unknown[], prepared: boolean, commit: boolean): Promise<T[]> {
    if (this.state === 'committed' || this.state === 'failed') {
      throw new Error(`sql: the transaction has ${this.state === 'committed' ? 'committed' : 'failed'}; no statement can follow: ${statement.text.slice(0, 120)}`);
    }
    const begin = this.state === 'new';
    // Until the answer says otherwise, the transaction may have begun (and may hold locks): a failure ends it with ROLLBACK.
    this.state = 'failed';
    const results = await new Promise<pg.QueryResult | pg.QueryResult[]>((resolve, reject) => {
      const query = new PipelinedQuery(
        { ...(prepared ? { name: statement.name } : {}), text: statement.text, values: params as unknown[], callback: (error: Error | null, result: never) => (error ? reject(error) : resolve(result)) },
        begin,
        commit,
      );
      this.connection.query(query);
    });
    this.state = commit ? 'committed' : 'open';
    // BEGIN, SET LOCAL, the statement and COMMIT each answer a result of their own.
    const result = Array.isArray(results) ? results[begin ? LEADING_STATEMENTS : 0]! : results;
    return result.rows as T[];
  }

  /** Ends the transaction if it is still open (a failed one with ROLLBACK whatever was asked). */
  async end(command: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    if (this.state === 'new' || this.state === 'committed') return;
    const failed = this.state === 'failed';
    this.state = failed || command === 'ROLLBACK' ? 'failed' : 'committed';
    await this.connection.query(failed ? 'ROLLBACK' : command);
  }
}

/** What PipelinedQuery sends before a transaction's first statement: BEGIN and SET LOCAL. */
const LEADING_STATEMENTS = 2;

/**
 * A statement of the extended protocol with BEGIN before it and/or COMMIT
 * after it, all written at once and closed by one Sync. When the statement
 * fails, PostgreSQL skips the COMMIT (everything up to the Sync) and the
 * transaction waits, aborted, for the ROLLBACK the caller sends.
 *
 * It overrides two methods of pg's Query (`prepare`, `_getRows`) that are
 * not part of pg's documented API: `pg` is pinned to an exact version in
 * package.json, and test/integration/sql.test.ts covers this class.
 */
class PipelinedQuery extends pg.Query {
  constructor(
    config: pg.QueryConfig & { callback: (error: Error | null, result: never) => void },
    private readonly begin: boolean,
    private readonly commit: boolean,
  ) {
    super(config);
  }

  requiresPreparation(): boolean {
    return true;
  }

  prepare(connection: ProtocolConnection): void {
    if (this.begin) {
      unnamed(connection, 'BEGIN');
      // The statements of these transactions find rows by key: their generic plan serves every call. Left to itself,
      // PostgreSQL planned most of them afresh on every call (a custom plan looked cheaper), which cost as much
      // database time as running them. A table's plans are made again when it is analyzed (see table-statistics.ts).
      unnamed(connection, 'SET LOCAL plan_cache_mode = force_generic_plan');
    }
    (pg.Query.prototype as unknown as { prepare(connection: ProtocolConnection): void }).prepare.call(this, connection);
  }

  /** Called by prepare after the statement's Bind and Describe: its Execute, the COMMIT, the Sync. */
  _getRows(connection: ProtocolConnection, rows: number | undefined): void {
    connection.execute({ portal: '', rows });
    if (this.commit) unnamed(connection, 'COMMIT');
    connection.sync();
  }
}

/** pg's protocol writer as far as it is used here. */
interface ProtocolConnection {
  parse(message: { text: string; name: string; types: unknown[] }): void;
  bind(message: { statement: string; portal: string; values: unknown[] }): void;
  execute(message: { portal: string; rows?: number }): void;
  sync(): void;
}

/** An unnamed statement without parameters or rows (BEGIN, COMMIT): Parse, Bind, Execute. */
function unnamed(connection: ProtocolConnection, text: string): void {
  connection.parse({ text, name: '', types: [] });
  connection.bind({ statement: '', portal: '', values: [] });
  connection.execute({ portal: '' });
}

interface PooledConnection {
  query<R>(config: { name?: string; text: string; values: readonly unknown[] }): Promise<{ rows: R[] }>;
}

/** knex's client as far as it is used here: its pool (or, in a transaction, the transaction's one connection). */
interface PooledClient {
  acquireConnection(): Promise<PooledConnection>;
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
