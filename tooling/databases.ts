import pg from 'pg';

// Databases a development process owns and may wipe (the test run's, the cluster smoke's, the
// rolling-deploy check's, a bench's): created empty and migrated, dropped when done. Modules
// that read configuration are imported lazily, after the caller has set its environment.

/** Runs `fn` on a connection to the server's maintenance database, with the name of `url`'s database. */
export async function withMaintenanceDb<T>(url: string, fn: (client: pg.Client, name: string) => Promise<T>): Promise<T> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    return await fn(client, name);
  } finally {
    await client.end();
  }
}

/** Drops `url`'s database, its open connections included. */
export async function dropDatabase(url: string): Promise<void> {
  await withMaintenanceDb(url, (client, name) => client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`));
}

/**
 * Drops and recreates `url`'s database, empty: in the server's default collation, or in an ICU
 * locale's (`icuLocale`, e.g. 'en-US': text ordered as most deployments' databases order it).
 */
export async function createEmptyDatabase(url: string, opts: { icuLocale?: string } = {}): Promise<void> {
  await withMaintenanceDb(url, async (client, name) => {
    await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
    const locale = opts.icuLocale ? ` template template0 locale_provider icu icu_locale ${pg.escapeLiteral(opts.icuLocale)}` : '';
    await client.query(`create database ${pg.escapeIdentifier(name)}${locale}`);
  });
}

/** Drops and recreates `url`'s database, then migrates it to the latest schema. */
export async function recreateDatabase(url: string): Promise<void> {
  const { ensureDatabase, describeStartupError } = await import('../lib/preflight');
  // ensureDatabase gives the one-line "cannot reach Postgres at … start it with …" message.
  await ensureDatabase(url).catch((err) => {
    throw new Error(describeStartupError(err));
  });
  await createEmptyDatabase(url);
  const { createKnex, migrateLatest } = await import('../lib/db');
  const k = createKnex(url);
  await migrateLatest(k);
  await k.destroy();
}
