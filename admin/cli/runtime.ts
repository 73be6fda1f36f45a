import { config } from '../../lib/config';

// Process lifecycle shared by bin/admin, bin/seed.ts and bin/migrate.ts: they are
// one-shot processes, so they must fail with one readable line when a service is missing,
// work against a database nobody has migrated yet, and release every pooled connection so
// the process exits as soon as its work is done. Start-up cost counts here (bin/admin runs
// once per call): Redis and its client library are loaded only by the verbs that use it.

let dbOpened = false;
let redisOpened = false;

/**
 * Preflight (exits with one line when Postgres, or Redis when asked for, is unreachable), then
 * migrate. Returns the migrations applied now.
 */
export async function openServices(opts: { redis?: boolean } = { redis: true }): Promise<string[]> {
  const { checkRedis, ensureDatabase, exitWithOneLine } = await import('../../lib/preflight');
  try {
    await Promise.all([ensureDatabase(config.databaseUrl), opts.redis ? checkRedis(config.redisUrl) : null]);
  } catch (err) {
    exitWithOneLine(err);
  }
  redisOpened = opts.redis ?? false;
  dbOpened = true;
  const { db, migrateLatest } = await import('../../lib/db');
  // Listing reads the folder and the migrations table only; applying takes knex's migration
  // lock, which an up-to-date database (nearly every call) does not need.
  const [, pending] = (await db().migrate.list()) as [unknown[], unknown[]];
  if (pending.length === 0) return [];
  // The compiled CLI (admin/cli/bundle.ts) runs on plain node; the migrations are TypeScript.
  if (process.env.ADMIN_CLI_BUNDLED) (await import('tsx/esm/api')).register();
  return migrateLatest();
}

export async function closeServices(): Promise<void> {
  const closing: Array<Promise<unknown>> = [];
  if (dbOpened) closing.push(import('../../lib/db').then((d) => d.closeDb()));
  if (redisOpened) closing.push(import('../../lib/redis').then((r) => r.closeRedis()));
  await Promise.allSettled(closing);
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
