import knexFactory, { type Knex } from 'knex';
import { Model } from 'objection';
import pg from 'pg';
import { config } from './config';

// Postgres `timestamptz` comes back as Date; bigint counters as numbers (they stay far below 2^53).
pg.types.setTypeParser(20, (v: string) => Number(v));

const TIMESTAMPTZ = 1184;
const parseTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (text: string) => Date;

/**
 * A `timestamptz` as the ISO string `toISOString()` makes of the Date pg would parse from it,
 * cut from Postgres' text instead of going through a Date: `2026-11-26 09:44:58.12+00` →
 * `2026-11-26T09:44:58.120Z` (digits past the third are dropped, as the Date drops them).
 * Only the UTC session's shape (4-digit year, `+00`) is cut; anything else (another TimeZone
 * setting, BC, infinity) is parsed as pg parses it and left to the caller (see `isoOf`).
 * bench/posts-list.ts: parsing and re-formatting the timestamps of a 50-post page was one of
 * the larger costs of the list request.
 */
export function timestamptzAsIso(text: string): string | Date {
  const n = text.length;
  if (n < 22 || n > 29 || text.charCodeAt(4) !== 45 || text.charCodeAt(10) !== 32 || !text.endsWith('+00')) return parseTimestamptz(text);
  const day = text.slice(0, 10);
  const time = text.slice(11, 19);
  if (n === 22) return `${day}T${time}.000Z`;
  if (text.charCodeAt(19) !== 46) return parseTimestamptz(text);
  const digits = text.slice(20, n - 3);
  return `${day}T${time}.${digits.length >= 3 ? digits.slice(0, 3) : digits.padEnd(3, '0')}Z`;
}

/** Per-query pg type parsers (`query.options({ types: TIMESTAMPS_AS_ISO })`): timestamptz columns as ISO strings. */
export const TIMESTAMPS_AS_ISO = {
  getTypeParser: (oid: number, format?: 'text' | 'binary'): ((value: string) => unknown) =>
    oid === TIMESTAMPTZ ? timestamptzAsIso : (pg.types.getTypeParser(oid, format ?? 'text') as (value: string) => unknown),
};

/** An instant read as a Date, or as an ISO string through TIMESTAMPS_AS_ISO, in ISO form. */
export function isoOf(value: Date | string): string {
  return typeof value === 'string' ? value : value.toISOString();
}

export function createKnex(url = config.databaseUrl, pool: { min?: number; max?: number } = {}): Knex {
  return knexFactory({
    client: 'pg',
    connection: url,
    pool: { min: pool.min ?? 0, max: pool.max ?? config.dbPoolMax },
    // Migrations are TypeScript run through tsx; knex resolves them from this folder.
    migrations: { directory: new URL('../migrations', import.meta.url).pathname, loadExtensions: ['.ts'], tableName: 'knex_migrations' },
  });
}

let shared: Knex | undefined;

/** The process-wide pool, bound to objection on first use. */
export function db(): Knex {
  if (!shared) {
    shared = createKnex();
    Model.knex(shared);
  }
  return shared;
}

export async function closeDb(): Promise<void> {
  if (shared) {
    const k = shared;
    shared = undefined;
    await k.destroy();
  }
}

export async function migrateLatest(k: Knex = db()): Promise<string[]> {
  const [, applied] = await k.migrate.latest();
  return applied as string[];
}
