// `npm test`: the whole suite against real services. It creates and migrates its own database
// (content_scheduler_test_<pid>), uses Redis database 15, runs a Temporal dev server on a free port
// (in memory), then runs mocha with that environment. Extra arguments go to mocha
// (e.g. `npm test -- test/posts`).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import pg from 'pg';

const root = path.resolve(import.meta.dirname, '..');
const env = process.env;
env.NODE_ENV = 'test';
// Each run gets its own database (named after its pid), so concurrent runs on one machine
// never drop each other's data; it is dropped at the end, and those of dead runs at the start.
const ownDatabase = !env.TEST_DATABASE_URL;
env.DATABASE_URL = env.TEST_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/content_scheduler_test_${process.pid}`;
env.REDIS_URL = env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
env.LOG_LEVEL ??= 'error';
env.WEBHOOK_ALLOW_LOOPBACK = '1';
env.PUBLISH_DELAY_SECONDS ??= '0';
env.RECONCILE_INTERVAL_SECONDS ??= '2';
env.PUBLISH_RETRY_BASE_SECONDS ??= '1';
env.SECRET_KEY ??= 'test-secret-key-0123456789abcdef';
env.ENCRYPTION_KEY ??= 'test-encryption-key';

function isAlive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

async function withMaintenanceDb<T>(url: string, fn: (c: pg.Client, name: string) => Promise<T>): Promise<T> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try { return await fn(client, name); } finally { await client.end(); }
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

async function resetDatabase(url: string) {
  await withMaintenanceDb(url, async (client, name) => {
    const stale = await client.query(`select datname from pg_database where datname ~ '^content_scheduler_test_[0-9]+$'`);
    for (const { datname } of stale.rows) {
      if (datname !== name && !isAlive(Number(datname.split('_').pop()))) await client.query(`drop database if exists ${quote(datname)} with (force)`);
    }
    await client.query(`drop database if exists ${quote(name)} with (force)`);
    await client.query(`create database ${quote(name)}`);
  });
}

async function dropDatabase(url: string) {
  await withMaintenanceDb(url, (client, name) => client.query(`drop database if exists ${quote(name)} with (force)`)).catch(() => {});
}

async function main() {
  const { preflightOrExit } = await import('../lib/preflight');
  await preflightOrExit({ databaseUrl: env.DATABASE_URL!, redisUrl: env.REDIS_URL! });
  await resetDatabase(env.DATABASE_URL!);
  const { createKnex, migrateLatest } = await import('../lib/db');
  const k = createKnex(env.DATABASE_URL!);
  await migrateLatest(k);
  await k.destroy();
  // Redis is not flushed: concurrent runs share it, and its keys are scoped by random ids.

  let stopTemporal = async () => {};
  if (!env.TEMPORAL_ADDRESS) {
    const { resolveTemporalBinary, startTemporalDevServer, freePort } = await import('../lib/temporalBinary');
    const binary = await resolveTemporalBinary({ log: (l) => console.log(`[temporal] ${l}`) });
    const server = await startTemporalDevServer({ binary, port: await freePort(), uiPort: null, dbFile: null, log: () => {} });
    env.TEMPORAL_ADDRESS = server.address;
    stopTemporal = () => server.stop();
    console.log(`Temporal dev server for the tests at ${server.address}`);
  }

  let stopObjectStore = async () => {};
  if (!env.S3_ENDPOINT) {
    // The embedded S3-compatible store (lib/storage/server.ts), on a free port and a temp dir.
    const { startObjectStore, objectStoreEnv } = await import('../lib/storage/server');
    const store = await startObjectStore({ log: () => {} });
    Object.assign(env, objectStoreEnv(store));
    stopObjectStore = store.stop;
  }

  const require = createRequire(import.meta.url);
  let stopSimulator = () => {};
  if (!env.NETWORK_API_URL) {
    // The network simulator runs as its own process, as under `npm start`; tests script it
    // through its control API (sim/network/control.ts).
    const { freePort } = await import('../lib/temporalBinary');
    const port = await freePort();
    const sim = spawn(process.execPath, ['--import', 'tsx', 'sim/network/main.ts'], { cwd: root, env: { ...env, NETWORK_SIMULATOR_PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      sim.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('listening')) resolve(); });
      sim.once('exit', (c) => reject(new Error(`network simulator exited (${c})`)));
    });
    env.NETWORK_API_URL = `http://127.0.0.1:${port}`;
    stopSimulator = () => { sim.kill('SIGTERM'); };
  }
  const mochaBin = path.join(path.dirname(require.resolve('mocha/package.json')), 'bin', 'mocha.js');
  const args = process.argv.slice(2);
  const specs = args.filter((a) => !a.startsWith('-'));
  const flags = args.filter((a) => a.startsWith('-'));
  const mocha = spawn(process.execPath, [
    mochaBin, '--import=tsx', '--forbid-only', '--timeout', '60000', '--exit', '--recursive', '--extension', 'ts',
    '--require', 'test/support/rootHooks.ts', ...flags, ...(specs.length ? specs : ['test']),
  ], { cwd: root, env, stdio: 'inherit' });
  const code: number = await new Promise((resolve) => mocha.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
  stopSimulator();
  await stopTemporal();
  await stopObjectStore();
  if (ownDatabase) await dropDatabase(env.DATABASE_URL!);
  process.exit(code);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
