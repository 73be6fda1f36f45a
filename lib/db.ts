import knexFactory, { type Knex } from 'knex';
import { Model } from 'objection';
import pg from 'pg';
import { config } from './config';

// Postgres `timestamptz` comes back as Date; bigint counters as numbers (they stay far below 2^53).
pg.types.setTypeParser(20, (v: string) => Number(v));

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
