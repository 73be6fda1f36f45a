import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import pg from 'pg';
import type { TemporalStore } from './stack';

// What the sleeping population occupies: Temporal's store (the dev server's SQLite file, or the
// cluster's two Postgres databases) and the service's database, in bytes, by table, so a phase's
// cost is the difference of two readings and the tables that grew show where it went.

const run = promisify(execFile);

export interface StorageReading {
  /** Bytes the store's tables and indexes occupy (SQLite: used pages; Postgres: pg_total_relation_size). */
  bytes: number;
  /** The dev server's file on disk, main file + WAL (null on the cluster). */
  fileBytes: number | null;
  /** Bytes per table or index. */
  byName: Record<string, number>;
}

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
      await new Promise((r) => setTimeout(r, 1000));
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
export async function postgresReading(url: string, prefix = ''): Promise<StorageReading> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; bytes: string }>(RELATION_SIZES);
    const byName: Record<string, number> = {};
    let bytes = 0;
    for (const r of rows) {
      byName[prefix + r.name] = Number(r.bytes);
      bytes += Number(r.bytes);
    }
    return { bytes, fileBytes: null, byName };
  } finally {
    await client.end();
  }
}

export async function temporalReading(store: TemporalStore): Promise<StorageReading> {
  if (store.kind === 'dev') return sqliteReading(store.file);
  const url = (name: string) =>
    `postgres://${encodeURIComponent(store.db.user)}${store.db.password ? `:${encodeURIComponent(store.db.password)}` : ''}@${store.db.host}:${store.db.port}/${encodeURIComponent(name)}`;
  const main = await postgresReading(url(store.db.name));
  const vis = await postgresReading(url(store.db.visibilityName), 'visibility.');
  return { bytes: main.bytes + vis.bytes, fileBytes: null, byName: { ...main.byName, ...vis.byName } };
}

export interface StorageGrowth {
  bytes: number;
  fileBytes: number | null;
  /** The tables and indexes that grew most, largest first. */
  top: Array<{ name: string; bytes: number }>;
}

export function growth(a: StorageReading, b: StorageReading, topN = 8): StorageGrowth {
  const names = new Set([...Object.keys(a.byName), ...Object.keys(b.byName)]);
  const top = [...names]
    .map((name) => ({ name, bytes: (b.byName[name] ?? 0) - (a.byName[name] ?? 0) }))
    .filter((x) => x.bytes !== 0)
    .sort((x, y) => y.bytes - x.bytes)
    .slice(0, topN);
  return {
    bytes: b.bytes - a.bytes,
    fileBytes: a.fileBytes !== null && b.fileBytes !== null ? b.fileBytes - a.fileBytes : null,
    top,
  };
}

/** "posts 812 B, posts_pkey 96 B, …" per unit. */
export function perUnit(g: StorageGrowth, units: number): string {
  return g.top
    .slice(0, 6)
    .map((t) => `${t.name} ${Math.round(t.bytes / Math.max(1, units))} B`)
    .join(', ');
}
