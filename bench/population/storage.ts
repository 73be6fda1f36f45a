import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import type { TemporalStore } from '../harness/temporal';

// What the population occupies, by table: a phase's cost is the difference of two readings.

const run = promisify(execFile);

/** Bytes the tables and indexes occupy, by name and in all, and the dev server's file on disk (main + WAL; null on Postgres). */
type StorageReading = { bytes: number; fileBytes: number | null; byName: Record<string, number> };

/**
 * SQLite's own accounting, through the sqlite3 shell reading the live file: used pages
 * (page_count − freelist_count) × page_size, and dbstat's bytes per table and index. The raw
 * file size is kept beside it: it never shrinks.
 */
async function sqliteReading(file: string): Promise<StorageReading> {
  const sql = `select 'pages', (select page_count from pragma_page_count()) - (select freelist_count from pragma_freelist_count()), (select page_size from pragma_page_size());
select name, sum(pgsize) from dbstat group by name;`;
  // Read as immutable: the shell takes no lock, so it can never hold up the server's writes (the
  // dev server writes in rollback-journal mode, where a reader's lock blocks its commit). A read
  // that meets a page mid-write fails and is tried again.
  let stdout = '';
  for (let attempt = 0; ; attempt++) {
    try {
      stdout = (await run('sqlite3', ['-separator', '\t', `file:${file}?immutable=1`, sql], { maxBuffer: 16 << 20 })).stdout;
      break;
    } catch (err) {
      if (attempt >= 8) throw err;
      await sleep(1000);
    }
  }
  const byName: Record<string, number> = {};
  let bytes = 0;
  for (const line of stdout.trim().split('\n')) {
    const [name, a, b] = line.split('\t');
    if (name === 'pages') bytes = Number(a) * Number(b);
    else if (name) byName[name] = Number(a);
  }
  if (!bytes) throw new Error(`sqlite3 read no page count from ${file}: ${stdout.slice(0, 200)}`);
  const size = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
  return { bytes, fileBytes: size(file) + size(`${file}-wal`), byName };
}

const RELATION_SIZES = `select c.relname as name, pg_total_relation_size(c.oid)::bigint as bytes
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
 where c.relkind in ('r', 'm', 'p') and n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast')`;

/** Tables of one Postgres database with their indexes and TOAST (pg_total_relation_size). */
async function postgresReading(url: string, prefix = ''): Promise<StorageReading> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; bytes: string }>(RELATION_SIZES);
    const byName = Object.fromEntries(rows.map((r) => [prefix + r.name, Number(r.bytes)]));
    return { bytes: rows.reduce((a, r) => a + Number(r.bytes), 0), fileBytes: null, byName };
  } finally {
    await client.end();
  }
}

async function temporalReading(store: TemporalStore): Promise<StorageReading> {
  if (store.kind === 'dev') return sqliteReading(store.file!);
  const { user, password, host, port } = store.db;
  const url = (name: string) =>
    `postgres://${encodeURIComponent(user)}${password ? `:${encodeURIComponent(password)}` : ''}@${host}:${port}/${encodeURIComponent(name)}`;
  const main = await postgresReading(url(store.db.name));
  const vis = await postgresReading(url(store.db.visibilityName), 'visibility.');
  return { bytes: main.bytes + vis.bytes, fileBytes: null, byName: { ...main.byName, ...vis.byName } };
}

export type StorageGrowth = ReturnType<typeof growth>;

/** From one reading to the next: bytes, file bytes, and the tables and indexes that grew most, largest first. */
export function growth(a: StorageReading, b: StorageReading, topN = 8) {
  const names = new Set([...Object.keys(a.byName), ...Object.keys(b.byName)]);
  const top = [...names]
    .map((name) => ({ name, bytes: (b.byName[name] ?? 0) - (a.byName[name] ?? 0) }))
    .filter((x) => x.bytes !== 0)
    .sort((x, y) => y.bytes - x.bytes)
    .slice(0, topN);
  return { bytes: b.bytes - a.bytes, fileBytes: a.fileBytes !== null && b.fileBytes !== null ? b.fileBytes - a.fileBytes : null, top };
}

/** "posts 812 B, posts_pkey 96 B, …" per unit. */
export const perUnit = (g: StorageGrowth, units: number) =>
  g.top
    .slice(0, 6)
    .map((t) => `${t.name} ${Math.round(t.bytes / Math.max(1, units))} B`)
    .join(', ');

/** Temporal's store and the service database read now; `growth()` reads them again and answers what each has grown since. */
export async function storageMark(store: TemporalStore, databaseUrl: string) {
  const [t0, d0] = [await temporalReading(store), await postgresReading(databaseUrl)];
  return {
    growth: async () => ({ temporal: growth(t0, await temporalReading(store)), service: growth(d0, await postgresReading(databaseUrl)) }),
  };
}
