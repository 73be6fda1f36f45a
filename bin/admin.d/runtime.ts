import { config } from '../../lib/config';
import { closeDb, migrateLatest } from '../../lib/db';
import { preflightOrExit } from '../../tooling/preflight';
import { closeRedis } from '../../lib/redis';

// Process lifecycle shared by bin/admin, scripts/seed.ts and scripts/migrate.ts: they are
// one-shot processes, so they must fail with one readable line when a service is missing,
// work against a database nobody has migrated yet, and release every pooled connection so
// the process exits as soon as its work is done.

/** Preflight (exits with one line when Postgres or Redis is unreachable), then migrate. Returns the migrations applied now. */
export async function openServices(): Promise<string[]> {
  await preflightOrExit({ databaseUrl: config.databaseUrl, redisUrl: config.redisUrl });
  return migrateLatest();
}

export async function closeServices(): Promise<void> {
  await Promise.allSettled([closeDb(), closeRedis()]);
}

/**
 * Exit soon even if some library left a handle open. The timer is unref'd, so a clean
 * shutdown exits at once and never waits for it.
 */
export function exitSoon(ms = 2_000): void {
  setTimeout(() => process.exit(), ms).unref();
}

/** One line for an error from the database driver, without the SQL knex prepends. */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err).replace(/\s+/g, ' ').trim();
  const e = err as Error & { code?: unknown; detail?: unknown; constraint?: unknown };
  if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) {
    // knex formats driver errors as "<sql> - <message>"; the SQL is noise for an operator.
    const message = e.message.includes(' - ') ? e.message.slice(e.message.lastIndexOf(' - ') + 3) : e.message;
    const detail = typeof e.detail === 'string' ? ` (${e.detail})` : '';
    if (e.code === '23505') return `already exists${detail}`;
    return `${message}${detail}`.replace(/\s+/g, ' ').trim();
  }
  return (e.message || e.name).replace(/\s+/g, ' ').trim();
}
