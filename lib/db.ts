import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
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

type DateOrIso<T> = T extends Date ? Date | string : T;

/** A row as a read with TIMESTAMPS_AS_ISO may give it: each instant a Date, or its ISO string. */
export type WithIsoInstants<Row> = { [K in keyof Row]: DateOrIso<Row[K]> };

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

/**
 * One request's writes and what waits for their COMMIT (docs/reliability.md "Idempotency"):
 * while a unit runs, `db()` and every objection model answer its transaction, so a handler's
 * statements (its own `transaction()` blocks become savepoints) commit or vanish together with
 * whatever the unit writes beside them (an Idempotency-Key's stored answer). Work outside the
 * database (a workflow start or signal) is queued with `afterCommit` and runs once the unit has
 * committed, on the pool, never inside the transaction.
 */
interface UnitOfWork {
  trx: Knex.Transaction;
  afterCommit: (() => Promise<void>)[];
  /** The answer once the work after the COMMIT is done (answerAfterCommit). */
  later?: () => Promise<unknown>;
}

const units = new AsyncLocalStorage<UnitOfWork>();

/** The process-wide pool itself, whatever unit of work the caller runs in: for what must hold a connection of its own (a LISTEN). */
export function pool(): Knex {
  if (!shared) {
    shared = createKnex();
    // The service's models take `db()` when a query is made (lib/models/base.ts); objection's
    // other ways to a knex (a model's `knex()`, `transaction()`) come through this proxy, which
    // answers `db()` too, so nothing a model runs inside a unit escapes its transaction.
    Model.knex(
      new Proxy(shared, {
        get: (_target, prop) => {
          const current = db() as unknown as Record<PropertyKey, unknown>;
          const value = current[prop];
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(current) : value;
        },
        apply: (_target, _this, args: unknown[]) => (db() as unknown as (...a: unknown[]) => unknown)(...args),
      }),
    );
  }
  return shared;
}

/**
 * The unit of work the caller runs in, while its transaction is open. Anything made inside a unit
 * (a timer, a connection's event handlers) keeps its async context after the unit has ended:
 * there, the unit is over and the pool answers.
 */
function activeUnit(): UnitOfWork | undefined {
  const unit = units.getStore();
  return unit && !unit.trx.isCompleted() ? unit : undefined;
}

/** The process-wide pool, or the transaction of the unit of work the caller runs in. */
export function db(): Knex {
  return activeUnit()?.trx ?? pool();
}

/** Whether the caller runs inside a unit of work (its writes commit at the unit's end). */
export function inUnitOfWork(): boolean {
  return activeUnit() !== undefined;
}

/**
 * Runs `fn` as one unit of work: every statement it makes through `db()` or a model is part of
 * one transaction, committed when `fn` resolves and rolled back when it throws. Then the work it
 * queued with `afterCommit` runs, in order, outside the transaction; a failure there is logged by
 * `onAfterCommitError` and does not change the answer (what it did not do, a reconciler does).
 * `later` is the answer the unit's request gives once that work is done (answerAfterCommit).
 */
export async function unitOfWork<T>(
  fn: (trx: Knex.Transaction) => Promise<T>,
  onAfterCommitError: (err: unknown) => void,
): Promise<{ value: T; later?: () => Promise<unknown> }> {
  const unit: UnitOfWork = { trx: undefined as unknown as Knex.Transaction, afterCommit: [] };
  const value = await units.exit(() =>
    pool().transaction((trx) => {
      unit.trx = trx;
      return units.run(unit, () => fn(trx));
    }),
  );
  await units.exit(async () => {
    for (const work of unit.afterCommit) {
      try {
        await work();
      } catch (err) {
        onAfterCommitError(err);
      }
    }
  });
  const { later } = unit;
  return later ? { value, later: () => units.exit(later) } : { value };
}

/**
 * The answer of a write that waits for its own work (spec 4.4 `wait_for_completion_ms`). Inside
 * a unit of work, the work cannot start before the COMMIT: the unit answers `now` (stored with the
 * writes) and `later` once its after-commit work is done. Elsewhere `later` is the answer.
 */
export async function answerAfterCommit<T>(now: T, later: () => Promise<T>): Promise<T> {
  const unit = activeUnit();
  if (!unit) return later();
  unit.later = later;
  return now;
}

/**
 * Work outside the database that must follow a write (a workflow start, a signal). Inside a unit
 * of work it waits for the unit's COMMIT (a workflow never sees a row that may still roll back);
 * elsewhere it runs now, and its failure is the caller's.
 */
export async function afterCommit(work: () => Promise<void>): Promise<void> {
  const unit = activeUnit();
  if (unit) unit.afterCommit.push(work);
  else await work();
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

const statementNames = new Map<string, string>();

/** A prepared statement's name, one per SQL text (pg keeps them per connection, by name). */
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (name === undefined) {
    // A bound on the texts remembered here, not on Postgres' side: a connection keeps the
    // statements it prepared until it closes.
    if (statementNames.size >= 1000) statementNames.clear();
    name = `q_${createHash('sha1').update(sql).digest('hex').slice(0, 32)}`;
    statementNames.set(sql, name);
  }
  return name;
}

/** A statement's text with `$n` placeholders and its values, as pg takes them. */
export interface BoundStatement {
  sql: string;
  bindings: readonly unknown[];
}

/** Marks a value's place in a query built once per shape (`shapedRead`); no input can hold U+0000 (api/validation.ts). */
const PARAM = '\u0000';

type Slot<Name> = { param: Name; index: number | undefined } | { constant: unknown };

/**
 * A read whose SQL text depends only on its shape, compiled by knex once per shape and bound to
 * each call's values. `build(shape, param)` writes the query as any read is written (objection
 * scopes, knex clauses), with `param(name)` — or `param(name, i)`, the i-th element of a list —
 * in place of every value of the call; it branches on `shape` alone, which names everything else
 * that changes the text (which filters, how many ids, the limit, the caller's role) and is the
 * cache key (as JSON). Anything `build` writes that is not a param is part of the shape's text
 * and bindings for every call. For the hottest reads (the post list, bench/posts-list.ts: its
 * objection and knex builders and their compilation to SQL were the largest piece of a request's
 * own code).
 */
export function shapedRead<Shape, Name extends string>(
  build: (shape: Shape, param: (name: Name, index?: number) => string) => Knex.QueryBuilder | Knex.Raw,
): (shape: Shape, values: Readonly<Record<Name, unknown>>) => BoundStatement {
  const compiled = new Map<string, { sql: string; slots: Slot<Name>[] }>();
  const param = (name: Name, index?: number) => `${PARAM}${name}${PARAM}${index ?? ''}`;
  return (shape, values) => {
    const key = JSON.stringify(shape);
    let statement = compiled.get(key);
    if (statement === undefined) {
      const { sql, bindings } = build(shape, param).toSQL().toNative();
      const slots = (bindings as unknown[]).map((b): Slot<Name> => {
        if (typeof b !== 'string' || !b.startsWith(PARAM)) return { constant: b };
        const [, name, index] = b.split(PARAM) as [string, Name, string];
        return { param: name, index: index === '' ? undefined : Number(index) };
      });
      // A bound on the shapes remembered, as for the statement names below.
      if (compiled.size >= 1000) compiled.clear();
      statement = { sql, slots };
      compiled.set(key, statement);
    }
    const bindings = statement.slots.map((slot) => {
      if ('constant' in slot) return slot.constant;
      const value = values[slot.param];
      return slot.index === undefined ? value : (value as readonly unknown[])[slot.index];
    });
    return { sql: statement.sql, bindings };
  };
}

/**
 * The rows of a read built with knex (or compiled once per shape: `shapedRead`) on the shared
 * pool, sent as a named (prepared) statement on one of the pool's connections: Postgres parses
 * and plans the text once per connection, and the request skips knex's runner. For the hottest
 * reads (the post list, bench/posts-list.ts); `types` are per-query pg type parsers
 * (TIMESTAMPS_AS_ISO). It runs on `db()`, or on `on` when the caller names the knex or the
 * transaction a read of a shared helper (lib/spend/meters.ts) was handed; a builder made on a
 * transaction is refused without `on`.
 * A pooler in front of Postgres in transaction mode must keep named statements (PgBouncer 1.21+
 * with `max_prepared_statements`; docs/publishing.md "Capacity" places one at larger sizes).
 *
 * `planEach` sends it unnamed instead, planned with each call's values: for a read whose best
 * plan depends on them, where the generic plan Postgres may keep for a named statement after
 * five calls reads far more. At a million posts, knowledge search's generic plan took 316 ms
 * against 19 ms planned with its values, and the overview's best times 103 ms against 5 ms
 * (bench/README.md, reads). The text is still compiled once; only the plan is made per call.
 */
export async function readPrepared<Row>(
  query: Knex.QueryBuilder | BoundStatement,
  opts: { types?: typeof TIMESTAMPS_AS_ISO; on?: Knex; planEach?: boolean } = {},
): Promise<Row[]> {
  // A transaction's builder would silently run outside its transaction here.
  if (!opts.on && !inUnitOfWork() && (query as unknown as { client?: { transacting?: boolean } }).client?.transacting)
    throw new Error('readPrepared runs on the pool, not in a transaction');
  const { sql, bindings } = 'toSQL' in query ? query.toSQL().toNative() : query;
  // Inside a unit of work the read sees the unit's own writes: it runs on the unit's connection
  // (a transaction's client hands out its one connection and releases nothing); so does a read
  // on a transaction named by `on`.
  const client = (opts.on ?? db()).client;
  const connection = (await client.acquireConnection()) as pg.Client;
  try {
    // Callback form, as knex's runner calls pg. With pg's promise form (a query built without a
    // callback) each page's rows stayed reachable past the request: under load they survived two
    // young-generation collections and were promoted (8 concurrent reads of a 50-post page:
    // 3.7 MB promoted per scavenge against under 20 KB in this form, GC a fifth of the CPU, and
    // 1.5–3.6× fewer reads per second over several runs). Which reference inside pg holds them was
    // not pinned down.
    return await new Promise<Row[]>((resolve, reject) =>
      connection.query(
        { name: opts.planEach ? undefined : statementName(sql), text: sql, values: bindings as unknown[], types: opts.types },
        (err: Error | null, result: pg.QueryResult) => (err ? reject(err) : resolve(result.rows as Row[])),
      ),
    );
  } finally {
    client.releaseConnection(connection);
  }
}
