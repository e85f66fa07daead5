import type { QueryBuilder } from '@mikro-orm/postgresql';
import { raw } from '@mikro-orm/postgresql';
import { validationError } from './errors.js';
import { isUuid } from './ids.js';

/**
 * Keyset ("cursor") pagination of lists ordered by a timestamp and a unique
 * tie-breaker. A cursor is opaque to clients: base64url of the list's name
 * and the sort key of the row it stands for, the timestamp to the
 * microsecond as PostgreSQL holds it (a JavaScript Date would round
 * `now()`-stamped rows to the millisecond and skip rows at a page boundary).
 * The next page is the rows after that key, `(at, tie) > (:at, :tie)` (or `<`
 * for newest-first lists), so rows written between two fetches neither
 * repeat nor shift a page the way OFFSET would.
 */

export interface PageRequest {
  /** How many rows, already checked against the list's bounds (see `pageSize`). */
  first: number;
  /** The `endCursor` of the previous page; none for the first page. */
  after?: string | null;
}

export interface Edge<T> {
  cursor: string;
  node: T;
}

export interface Page<T> {
  edges: Edge<T>[];
  hasNextPage: boolean;
  /** Cursor of the last edge; null on an empty page. */
  endCursor: string | null;
}

/** Rows a page holds unless told. */
export const PAGE_SIZE_DEFAULT = 50;

/** Checks a requested page size: 1..max. */
export function pageSize(first: number, max: number): number {
  if (!Number.isInteger(first) || first < 1 || first > max) throw validationError(`first must be between 1 and ${max}`);
  return first;
}

/** How a list is ordered: a timestamp column and a unique tie-breaker column of the query's root alias. */
export interface Keyset {
  /** Name written into cursors; a cursor of another list is refused. */
  list: string;
  /** Root alias of the query builder. */
  alias: string;
  /** Property and column of the timestamp. */
  at: { property: string; column: string };
  /** Property and column of the unique tie-breaker. */
  tie: { property: string; column: string; uuid?: boolean };
  order: 'asc' | 'desc';
}

interface CursorKey {
  at: string;
  tie: string;
}

const TIMESTAMP_PATTERN = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3})\d{3}Z$/;
/** The timestamp as text, UTC, to the microsecond: the format cursors carry. */
const timestampText = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export const encodeCursor = (list: string, key: CursorKey): string => Buffer.from(JSON.stringify([list, key.at, key.tie])).toString('base64url');

/** The sort key of a cursor of this list; anything else is VALIDATION_FAILED. */
export function decodeCursor(keyset: Keyset, cursor: string): CursorKey {
  const refused = validationError('after: not a cursor of this list');
  if (!/^[A-Za-z0-9_-]{1,4096}$/.test(cursor)) throw refused;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw refused;
  }
  if (!Array.isArray(decoded) || decoded.length !== 3 || !decoded.every((part) => typeof part === 'string')) throw refused;
  const [list, at, tie] = decoded as [string, string, string];
  if (list !== keyset.list) throw refused;
  // A valid instant (no 30 February): its milliseconds part reads back the same.
  const millis = TIMESTAMP_PATTERN.exec(at)?.[1];
  const date = millis ? new Date(`${millis}Z`) : null;
  if (!date || Number.isNaN(date.getTime()) || date.toISOString() !== `${millis}Z`) throw refused;
  // No NUL either: PostgreSQL refuses it in text, so no row has it and the query would fail.
  if (tie.length === 0 || [...tie].length > 255 || tie.includes('\u0000') || (keyset.tie.uuid && !isUuid(tie))) throw refused;
  return { at, tie };
}

/**
 * One page of the rows `query` selects (filtered, root alias `keyset.alias`),
 * in keyset order after `request.after`. Reads first + 1 keys to know whether
 * more follow, then loads the page's items with `load` (by id, in any order):
 * entities, or views read as plain rows.
 */
export async function keysetPage<E extends object, T extends { id: string }>(
  query: QueryBuilder<E>,
  keyset: Keyset,
  request: PageRequest,
  load: (ids: string[]) => Promise<T[]>,
): Promise<Page<T>> {
  const { alias, at, tie, order } = keyset;
  const atColumn = `"${alias}"."${at.column}"`;
  const tieColumn = `"${alias}"."${tie.column}"`;
  query.select([`${alias}.id`, raw(`${timestampText(atColumn)} as "cursor_at"`), raw(`${tieColumn}::text as "cursor_tie"`)]);
  if (request.after) {
    const key = decodeCursor(keyset, request.after);
    query.andWhere(`(${atColumn}, ${tieColumn}) ${order === 'asc' ? '>' : '<'} (?::timestamptz, ?)`, [key.at, key.tie]);
  }
  query.orderBy([{ [at.property]: order }, { [tie.property]: order }] as never).limit(request.first + 1);
  const rows = await query.execute<{ id: string; cursor_at: string; cursor_tie: string }[]>('all', false);
  const pageRows = rows.slice(0, request.first);
  const byId = new Map((pageRows.length ? await load(pageRows.map((row) => row.id)) : []).map((entity) => [entity.id, entity]));
  const edges = pageRows.flatMap((row) => {
    const node = byId.get(row.id);
    // A row deleted between the two reads is left out of the page.
    return node ? [{ cursor: encodeCursor(keyset.list, { at: row.cursor_at, tie: row.cursor_tie }), node }] : [];
  });
  const last = pageRows.at(-1);
  return {
    edges,
    hasNextPage: rows.length > request.first,
    endCursor: last ? encodeCursor(keyset.list, { at: last.cursor_at, tie: last.cursor_tie }) : null,
  };
}
