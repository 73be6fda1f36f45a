import { z } from 'zod';
import type { Knex } from 'knex';
import type { AnyQueryBuilder } from 'objection';
import { config } from '../lib/config';
import { isoOf } from '../lib/db';
import { errors } from '../lib/errors';
import { mintCursor, mintSortCursor, readCursor, readSortCursor, type CursorPosition, type SortPosition } from '../lib/tokens';

// spec 2.1 / 4.4: cursor pagination, createdAt desc then id desc. A cursor is opaque, signed,
// and bound to the filters it was minted under, so a changed filter answers 400 bad_cursor.

export const paginationInput = {
  limit: z.any().optional(),
  cursor: z.string().max(500).optional(),
};

export function parseLimit(
  raw: unknown,
  fallback: number = config.limits.postListDefault,
  max: number = config.limits.postListMax,
): number {
  if (raw === undefined || raw === '') return fallback;
  const s = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : '';
  if (!/^-?\d+$/.test(s)) throw errors.badPagination();
  const n = Number(s);
  if (n < 1) throw errors.badPagination();
  return Math.min(n, max);
}

/** The cursor for the row after `pos`, under `filters` (lib/tokens.ts: a signed token). */
export function encodeCursor(pos: CursorPosition, filters: Record<string, unknown>): string {
  return mintCursor(pos, filters);
}

/** null without a cursor; 400 bad_cursor for one that is forged, altered or minted under other filters. */
export function decodeCursor(cursor: string | undefined, filters: Record<string, unknown>): Promise<CursorPosition | null> {
  return positionOf(cursor, filters, readCursor);
}

/** The cursor for the row after `pos` in a list sorted by another key than created_at (lib/tokens.ts). */
export function encodeSortCursor(pos: SortPosition, filters: Record<string, unknown>): string {
  return mintSortCursor(pos, filters);
}

/** As decodeCursor, for a cursor of encodeSortCursor. */
export function decodeSortCursor(cursor: string | undefined, filters: Record<string, unknown>): Promise<SortPosition | null> {
  return positionOf(cursor, filters, readSortCursor);
}

async function positionOf<P>(
  cursor: string | undefined,
  filters: Record<string, unknown>,
  read: (cursor: string, filters: Record<string, unknown>) => Promise<P | null>,
): Promise<P | null> {
  if (cursor === undefined || cursor === '') return null;
  const pos = await read(cursor, filters);
  if (!pos) throw errors.badCursor();
  return pos;
}

export interface Page<T> {
  data: T[];
  pagination: { next_cursor: string | null; has_more: boolean; total?: number };
}

/** A list answered whole, in the page envelope (spec 2.1): there is no next page. */
export function onlyPage<T>(data: T[]): Page<T> {
  return { data, pagination: { next_cursor: null, has_more: false } };
}

/**
 * The keyset clauses of a page (spec 2.1): the rows after `pos` in created_at desc, id desc
 * order, one more than `limit` to tell whether a next page follows. `table` qualifies the
 * columns when the query joins. The position's values may be a shaped read's params
 * (lib/db.ts `shapedRead`).
 */
export function keysetClauses(
  query: Knex.QueryBuilder,
  pos: { createdAt: string; id: string } | null,
  limit: number,
  table?: string,
): Knex.QueryBuilder {
  const col = (c: string) => (table ? `${table}.${c}` : c);
  if (pos) query.whereRaw(`(${col('created_at')}, ${col('id')}) < (?::timestamptz, ?)`, [pos.createdAt, pos.id]);
  return query
    .orderBy([
      { column: col('created_at'), order: 'desc' },
      { column: col('id'), order: 'desc' },
    ])
    .limit(limit + 1);
}

/**
 * Runs a keyset page over `source`: a query already filtered and scoped (a knex or an objection
 * builder), to which the keyset clauses are added, or a function reading the rows after a
 * position (null: the first page) with those clauses itself (a shaped read, lib/db.ts).
 */
export async function keysetPage<Row extends { id: string; created_at: Date | string }, T>(
  source: Knex.QueryBuilder | AnyQueryBuilder | ((pos: CursorPosition | null) => Promise<Row[]>),
  opts: {
    limit: number;
    cursor?: string;
    filters: Record<string, unknown>;
    table?: string;
    present: (row: Row) => T;
  },
): Promise<Page<T>> {
  const pos = opts.cursor ? await decodeCursor(opts.cursor, opts.filters) : null;
  const rows =
    typeof source === 'function'
      ? await source(pos)
      : // An objection query builder (lib/models) takes the same whereRaw/orderBy/limit calls.
        ((await keysetClauses(source as Knex.QueryBuilder, pos, opts.limit, opts.table)) as Row[]);
  const hasMore = rows.length > opts.limit;
  const page = hasMore ? rows.slice(0, opts.limit) : rows;
  const last = page[page.length - 1];
  return {
    // One argument only: a presenter with an optional second parameter (presentJob's live
    // progress) must not receive the array index.
    data: page.map((row) => opts.present(row)),
    pagination: {
      next_cursor: hasMore && last ? encodeCursor({ createdAt: isoOf(last.created_at), id: last.id }, opts.filters) : null,
      has_more: hasMore,
    },
  };
}
