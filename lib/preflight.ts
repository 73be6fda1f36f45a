// Checks run before a process starts serving, so that a missing Postgres or Redis shows up as
// one actionable line instead of a driver stack trace from deep inside a request.

import fs from 'node:fs';
import pg from 'pg';

/** A failure whose message is already the single line to show the operator. */
export class PreflightError extends Error {
  readonly variable: string;
  constructor(message: string, variable: string) {
    super(message);
    this.variable = variable;
    this.name = 'PreflightError';
  }
}

/** The URL with any password replaced, safe for logs and terminals. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    // Drivers also accept a password as a query parameter.
    for (const key of [...u.searchParams.keys()]) {
      if (/pass|secret|token/i.test(key)) u.searchParams.set(key, '***');
    }
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
  }
}

function hostPort(url: string, defaultPort: number): string {
  try {
    const u = new URL(url);
    const socketHost = u.searchParams.get('host');
    if (!u.hostname && socketHost) return socketHost;
    return `${u.hostname || 'localhost'}:${u.port || defaultPort}`;
  } catch {
    return maskUrl(url);
  }
}

/** The code of a socket error, also when Node wraps several attempts in an AggregateError. */
function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; errors?: unknown[] };
  if (typeof e?.code === 'string' && e.code) return e.code;
  if (Array.isArray(e?.errors)) {
    for (const inner of e.errors) {
      const code = errorCode(inner);
      if (code) return code;
    }
  }
  return undefined;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    if (err.message) return oneLine(err.message);
    const inner = (err as { errors?: unknown[] }).errors?.[0];
    if (inner) return errorText(inner);
    return err.name;
  }
  return oneLine(String(err));
}

function postgresStartHint(): string {
  // Name the installed cluster version when there is one, so the command can be pasted as is.
  let version = '<version>';
  try {
    const versions = fs
      .readdirSync('/etc/postgresql')
      .filter((d) => /^\d+$/.test(d))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) version = versions[0];
  } catch {
    /* not a Debian-style install */
  }
  return `Start it (e.g. pg_ctlcluster ${version} main start, or docker compose up -d postgres) or set DATABASE_URL.`;
}

const REDIS_START_HINT = 'Start it (e.g. redis-server --daemonize yes, or docker compose up -d redis) or set REDIS_URL.';

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'ENOENT',
  'EPIPE',
]);

function postgresError(url: string, err: unknown): PreflightError {
  const code = errorCode(err);
  const where = hostPort(url, 5432);
  const text = errorText(err);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new PreflightError(
      `DATABASE_URL: cannot resolve the Postgres host in ${maskUrl(url)} (${code}). Fix the host or set DATABASE_URL.`,
      'DATABASE_URL',
    );
  }
  if ((code && UNREACHABLE.has(code)) || /timeout|terminated unexpectedly/i.test(text)) {
    return new PreflightError(`DATABASE_URL: cannot reach Postgres at ${where} (${code ?? text}). ${postgresStartHint()}`, 'DATABASE_URL');
  }
  if (code === '28P01' || code === '28000') {
    return new PreflightError(
      `DATABASE_URL: Postgres at ${where} refused the login in ${maskUrl(url)} (${text}). Fix the user or password in DATABASE_URL.`,
      'DATABASE_URL',
    );
  }
  return new PreflightError(`DATABASE_URL: Postgres at ${where} (${maskUrl(url)}): ${text}${code ? ` (${code})` : ''}`, 'DATABASE_URL');
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

async function tryConnect(connectionString: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5_000 });
  // A server that goes away later emits 'error' on an idle client; without a listener that
  // would crash the process from a place nobody is awaiting.
  client.on('error', () => undefined);
  try {
    await client.connect();
    return client;
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
}

/**
 * Make sure the database named in `url` exists, creating it through the server's maintenance
 * database when it does not, so a fresh machine needs only a running Postgres.
 * Throws PreflightError with a one-line message.
 */
export async function ensureDatabase(url: string): Promise<void> {
  try {
    const client = await tryConnect(url);
    await client.end();
    return;
  } catch (err) {
    if (errorCode(err) !== '3D000') throw postgresError(url, err);
  }

  let dbName: string;
  let parsed: URL;
  try {
    parsed = new URL(url);
    dbName = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  } catch {
    throw new PreflightError(`DATABASE_URL: ${maskUrl(url)} is not a valid postgres:// URL.`, 'DATABASE_URL');
  }
  if (!dbName) throw new PreflightError(`DATABASE_URL: ${maskUrl(url)} names no database.`, 'DATABASE_URL');

  let admin: pg.Client | null = null;
  let lastErr: unknown = null;
  // template1 exists on every server even where the postgres database was dropped.
  for (const maintenanceDb of ['postgres', 'template1']) {
    const u = new URL(parsed.toString());
    u.pathname = `/${maintenanceDb}`;
    try {
      admin = await tryConnect(u.toString());
      break;
    } catch (err) {
      lastErr = err;
      if (errorCode(err) !== '3D000') break;
    }
  }
  if (!admin) throw postgresError(url, lastErr);

  try {
    await admin.query(`CREATE DATABASE ${quoteIdent(dbName)}`);
  } catch (err) {
    const code = errorCode(err);
    // Another process started at the same time may have created it first.
    if (code !== '42P04') {
      if (code === '42501') {
        throw new PreflightError(
          `DATABASE_URL: database "${dbName}" does not exist and the user in ${maskUrl(url)} may not create it. ` +
            `Create it (createdb ${dbName}) or use a user with CREATEDB.`,
          'DATABASE_URL',
        );
      }
      throw postgresError(url, err);
    }
  } finally {
    await admin.end().catch(() => undefined);
  }
}

/** Connect and PING once. Throws PreflightError with a one-line message. */
export async function checkRedis(url: string): Promise<void> {
  // Loaded here: a process that checks only Postgres (most bin/admin calls) never pays for it.
  const ioredis = await import('ioredis');
  // Bundled (bin/admin's compiled entry), the CommonJS module's exports sit on `default`.
  const Redis = ioredis.Redis ?? (ioredis as unknown as { default: typeof ioredis }).default.Redis;
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 5_000,
    // One attempt: the point is to report, not to wait for the server to appear.
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
  });
  let lastError: unknown = null;
  redis.on('error', (err) => (lastError = err));
  const where = hostPort(url, 6379);
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    const cause = lastError ?? err;
    const code = errorCode(cause) ?? errorCode(err);
    const text = errorText(cause);
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      throw new PreflightError(
        `REDIS_URL: cannot resolve the Redis host in ${maskUrl(url)} (${code}). Fix the host or set REDIS_URL.`,
        'REDIS_URL',
      );
    }
    if ((code && UNREACHABLE.has(code)) || /connect|closed|timeout/i.test(text)) {
      throw new PreflightError(`REDIS_URL: cannot reach Redis at ${where} (${code ?? text}). ${REDIS_START_HINT}`, 'REDIS_URL');
    }
    if (/NOAUTH|WRONGPASS|invalid password|AUTH/i.test(text)) {
      throw new PreflightError(
        `REDIS_URL: Redis at ${where} refused the credentials in ${maskUrl(url)} (${text}). Fix the password in REDIS_URL.`,
        'REDIS_URL',
      );
    }
    throw new PreflightError(`REDIS_URL: Redis at ${where} (${maskUrl(url)}): ${text}`, 'REDIS_URL');
  } finally {
    redis.disconnect();
  }
}

/** The line to print for a startup failure: a PreflightError as is, anything else flattened. */
export function describeStartupError(err: unknown, variable?: string): string {
  if (err instanceof PreflightError) return err.message;
  const text = errorText(err);
  return variable ? `${variable}: ${text}` : text;
}

/** Print exactly one line to stderr and exit 1: operators need the cause, not a stack trace. */
export function exitWithOneLine(err: unknown, variable?: string): never {
  process.stderr.write(`${describeStartupError(err, variable)}\n`);
  process.exit(1);
}

/** ensureDatabase + checkRedis, exiting with one line on the first failure. */
export async function preflightOrExit(opts: { databaseUrl: string; redisUrl: string }): Promise<void> {
  try {
    await Promise.all([ensureDatabase(opts.databaseUrl), checkRedis(opts.redisUrl)]);
  } catch (err) {
    exitWithOneLine(err);
  }
}
