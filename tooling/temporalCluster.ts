// The cluster tier (docs/operations.md "The cluster tier"): the Temporal server built from its Go
// module, on two databases of the local Postgres, as one process per service (frontend,
// history, matching, internal worker), so that one service can be killed and restarted on its
// own, as in production. The binaries are found or built like the CLI's
// (tooling/serverProcess.ts): TEMPORAL_SERVER_PATH / TEMPORAL_SQL_TOOL_PATH → on PATH → the
// shared cache folder → `go install`.

import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { msToTs } from '@temporalio/common/lib/time';
import pg from 'pg';
import { SEARCH_ATTRIBUTE_KEYS } from '../lib/searchAttributes';
import { publishPostWorkflow } from '../workflows/publishPost';
import { freePort, portAcceptsConnections } from './ports';
import { defaultLog, resolveGoBinary, runToEnd, spawnServer, type GoBinary, type LogFn, type ServerProcess } from './serverProcess';
import { waitForFrontend } from './temporalBinary';

/** The server release the CLI (TEMPORAL_CLI_VERSION v1.5.1) embeds, so both tiers run the same server. */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';

const serverBinary = (p: { name: string; builtName: string; label: string; pathVar: string; module: string }): GoBinary => ({
  ...p,
  version: TEMPORAL_SERVER_VERSION,
  installScript: 'npm run temporal:server:install',
});

const TEMPORAL_SERVER = serverBinary({
  name: 'temporal-server',
  builtName: 'server',
  label: 'the Temporal server',
  pathVar: 'TEMPORAL_SERVER_PATH',
  module: 'go.temporal.io/server/cmd/server',
});
/** `temporal-sql-tool`: creates the databases and applies the schema it carries embedded. */
const TEMPORAL_SQL_TOOL = serverBinary({
  name: 'temporal-sql-tool',
  builtName: 'sql',
  label: 'the Temporal SQL schema tool',
  pathVar: 'TEMPORAL_SQL_TOOL_PATH',
  module: 'go.temporal.io/server/cmd/tools/sql',
});

/**
 * The Temporal Web UI server of the cluster tier: the release the CLI embeds (`temporal --version`
 * reports "UI 2.42.1"), so both tiers show the same UI. Its web assets are compiled into the
 * module, so `go install` is the whole build.
 */
export const TEMPORAL_UI_SERVER_VERSION = 'v2.42.1';

const TEMPORAL_UI_SERVER: GoBinary = {
  name: 'temporal-ui-server',
  builtName: 'server',
  label: 'the Temporal UI server',
  pathVar: 'TEMPORAL_UI_SERVER_PATH',
  module: 'github.com/temporalio/ui-server/v2/cmd/server',
  version: TEMPORAL_UI_SERVER_VERSION,
  installScript: 'npm run temporal:ui:install',
};

export function resolveTemporalUiServerBinary(opts: { log?: LogFn } = {}): Promise<string> {
  return resolveGoBinary(TEMPORAL_UI_SERVER, opts.log ?? defaultLog);
}

/** Both binaries of the cluster tier, built into the cache when nothing else has them. */
export async function resolveTemporalServerBinaries(opts: { log?: LogFn } = {}): Promise<{ server: string; sqlTool: string }> {
  const log = opts.log ?? defaultLog;
  // One after the other: two Go builds at once would only share the same cores.
  const server = await resolveGoBinary(TEMPORAL_SERVER, log);
  const sqlTool = await resolveGoBinary(TEMPORAL_SQL_TOOL, log);
  return { server, sqlTool };
}

export const TEMPORAL_SERVICES = ['frontend', 'history', 'matching', 'worker'] as const;
export type TemporalService = (typeof TEMPORAL_SERVICES)[number];

export interface ClusterPorts {
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  membership: Record<TemporalService, number>;
  metrics: Record<TemporalService, number>;
  /** The Temporal UI server's HTTP port, when the cluster runs one. */
  ui: number;
}

/** The server module's usual ports (7233 for the frontend, 8000-8003 for metrics): what `npm run cluster` uses. */
export const STANDARD_PORTS: ClusterPorts = {
  frontend: 7233,
  frontendHttp: 7243,
  history: 7234,
  matching: 7235,
  worker: 7239,
  membership: { frontend: 6933, history: 6934, matching: 6935, worker: 6939 },
  metrics: { frontend: 8000, history: 8001, matching: 8002, worker: 8003 },
  // The CLI dev server's UI port: whichever tier runs, the UI is at the same address.
  ui: 8233,
};

/**
 * Membership ports are stored in cluster_membership.rpc_port, a Postgres smallint: a port above
 * 32767 (any of the kernel's ephemeral ones) fails the service's first heartbeat. So these come
 * from below that, tried at random until one binds.
 */
const MEMBERSHIP_PORT_RANGE = [20_000, 32_767] as const;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** Free ports for every listener, so a smoke run or a bench never meets another cluster. */
export async function freeClusterPorts(): Promise<ClusterPorts> {
  const taken = new Set<number>();
  const next = async (low = false) => {
    for (;;) {
      const [min, max] = MEMBERSHIP_PORT_RANGE;
      const p = low ? min + Math.floor(Math.random() * (max - min)) : await freePort();
      if (!taken.has(p) && (!low || (await bindable(p)))) {
        taken.add(p);
        return p;
      }
    }
  };
  const per = async (low = false) => ({
    frontend: await next(low),
    history: await next(low),
    matching: await next(low),
    worker: await next(low),
  });
  return {
    frontend: await next(),
    frontendHttp: await next(),
    history: await next(),
    matching: await next(),
    worker: await next(),
    membership: await per(true),
    metrics: await per(),
    ui: await next(),
  };
}

export interface ClusterDatabase {
  host: string;
  port: number;
  user: string;
  password: string;
  /** The history store, e.g. `temporal`. */
  name: string;
  /** The visibility store, e.g. `temporal_visibility`. */
  visibilityName: string;
}

/**
 * The two databases on the Postgres server of `databaseUrl` (the application's, by default):
 * same host and credentials, the database names given.
 */
export function clusterDatabase(databaseUrl: string, name = 'temporal'): ClusterDatabase {
  const u = new URL(databaseUrl);
  return {
    host: u.hostname || '127.0.0.1',
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username || 'postgres'),
    password: decodeURIComponent(u.password),
    name,
    visibilityName: `${name}_visibility`,
  };
}

const TEMPLATE_DIR = path.join(import.meta.dirname, 'temporal-cluster');

/**
 * The first key of the cluster lock (an advisory lock's two int4 keys: this class, then the
 * history database name's hashtext). Any constant no other code of ours locks with.
 */
const CLUSTER_LOCK_CLASS = 0x7e3c;

/** A second cluster on databases a running one holds. */
export class ClusterRunningError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClusterRunningError';
  }
}

export interface ClusterLock {
  release(): Promise<void>;
}

/**
 * Holds a Postgres advisory lock on the cluster's databases for as long as the cluster runs, on
 * a connection of its own: a second cluster on the same databases (the standard `temporal`, say)
 * is refused before it drops, migrates or joins them, and a cluster that dies (even by SIGKILL)
 * drops its connection and with it the lock, so no stale pid file ever blocks the next start.
 * Session-level advisory locks live in one database's scope, so the lock is taken in the server's
 * `postgres` database, where every cluster of the server meets.
 */
export async function lockClusterDatabases(db: ClusterDatabase, log: LogFn = defaultLog): Promise<ClusterLock> {
  const client = new pg.Client({
    host: db.host,
    port: db.port,
    user: db.user,
    password: db.password,
    database: 'postgres',
    application_name: `temporal-cluster pid ${process.pid}`.slice(0, 63),
  });
  await client.connect();
  let released = false;
  client.on('error', (err) => {
    if (!released) log(`the lock on the Temporal databases ${db.name} is lost with its connection: ${err.message}`);
  });
  try {
    const { rows } = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as ok', [
      CLUSTER_LOCK_CLASS,
      db.name,
    ]);
    if (!rows[0]?.ok) {
      const holder = await client.query<{ pid: number; application_name: string; backend_start: Date }>(
        `select a.pid, a.application_name, a.backend_start from pg_locks l join pg_stat_activity a on a.pid = l.pid
         where l.locktype = 'advisory' and l.granted and l.classid = $1 and l.objid = hashtext($2)::oid and l.objsubid = 2`,
        [CLUSTER_LOCK_CLASS, db.name],
      );
      const h = holder.rows[0];
      const who = h
        ? `${h.application_name || `Postgres backend ${h.pid}`}, up since ${h.backend_start.toISOString()}`
        : 'its holder just left';
      throw new ClusterRunningError(
        `a Temporal cluster is already running on the databases ${db.name} and ${db.visibilityName} of ${db.host}:${db.port} (${who}). ` +
          'A second one would share its persistence: stop that one first (Ctrl-C in its terminal).',
      );
    }
  } catch (err) {
    released = true;
    await client.end().catch(() => undefined);
    throw err;
  }
  return {
    release: async () => {
      if (released) return;
      released = true;
      // Closing the session releases its advisory locks.
      await client.end().catch(() => undefined);
    },
  };
}

/** Fills the `${NAME}` tokens of a template; a token without a value is an error, not an empty string. */
export function renderTemplate(template: string, values: Record<string, string | number>): string {
  return template.replace(/\$\{([A-Z_]+)\}/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`cluster config template: no value for \${${name}}`);
    return String(values[name]);
  });
}

async function runTool(binary: string, args: string[], log: LogFn): Promise<void> {
  const { code, out } = await runToEnd(binary, args);
  if (code !== 0)
    throw new Error(
      `temporal-sql-tool ${args.filter((a) => !a.startsWith('--password')).join(' ')} exited ${code}: ${out.trim().slice(-600)}`,
    );
  log(`temporal-sql-tool ${args.slice(-3).join(' ')}: ok`);
}

/**
 * Creates what is missing of the two databases and brings both schemas to the tool's latest
 * version (`setup-schema -v 0.0` once, then `update-schema` from the schema embedded in the
 * tool, so no module source is needed on disk). `fresh` drops both first.
 */
export async function prepareClusterDatabases(opts: { sqlTool: string; db: ClusterDatabase; fresh?: boolean; log?: LogFn }): Promise<void> {
  const log = opts.log ?? defaultLog;
  const { db } = opts;
  const admin = new pg.Client({ host: db.host, port: db.port, user: db.user, password: db.password, database: 'postgres' });
  await admin.connect();
  try {
    for (const [name, schema] of [
      [db.name, 'postgresql/v12/temporal'],
      [db.visibilityName, 'postgresql/v12/visibility'],
    ] as const) {
      const conn = ['--plugin', 'postgres12', '--endpoint', db.host, '--port', String(db.port), '--user', db.user];
      if (db.password) conn.push(`--password=${db.password}`);
      conn.push('--database', name);
      if (opts.fresh) await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
      const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount! > 0;
      if (!exists) {
        await runTool(opts.sqlTool, [...conn, 'create-database'], log);
        await runTool(opts.sqlTool, [...conn, 'setup-schema', '-v', '0.0'], log);
      }
      await runTool(opts.sqlTool, [...conn, 'update-schema', '--schema-name', schema], log);
    }
  } finally {
    await admin.end();
  }
}

export async function dropClusterDatabases(db: ClusterDatabase): Promise<void> {
  const admin = new pg.Client({ host: db.host, port: db.port, user: db.user, password: db.password, database: 'postgres' });
  await admin.connect();
  try {
    for (const name of [db.name, db.visibilityName]) await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

export interface TemporalUi {
  /** The UI's address, e.g. http://127.0.0.1:8233. */
  url: string;
  process: ServerProcess;
  stop(): Promise<void>;
}

/**
 * Runs the Temporal UI server (resolveTemporalUiServerBinary) against the frontend at
 * `frontendAddress`, its configuration rendered into `dir`/config/ui.yaml (default a temp dir,
 * removed on stop), and resolves once it answers for the namespace (waitForUi).
 */
export async function startTemporalUi(opts: {
  binary: string;
  frontendAddress: string;
  port: number;
  namespace: string;
  dir?: string;
  log?: LogFn;
  detached?: boolean;
  timeoutMs?: number;
}): Promise<TemporalUi> {
  const ownDir = !opts.dir;
  const dir = opts.dir ? path.resolve(opts.dir) : await fsp.mkdtemp(path.join(os.tmpdir(), 'temporal-ui-'));
  const removeDir = () => (ownDir ? fsp.rm(dir, { recursive: true, force: true }) : Promise.resolve());
  const configDir = path.join(dir, 'config');
  await fsp.mkdir(configDir, { recursive: true });
  const template = await fsp.readFile(path.join(TEMPLATE_DIR, 'ui.template.yaml'), 'utf8');
  await fsp.writeFile(
    path.join(configDir, 'ui.yaml'),
    renderTemplate(template, { FRONTEND_ADDRESS: opts.frontendAddress, UI_PORT: opts.port, NAMESPACE: opts.namespace }),
  );
  const log = opts.log ?? defaultLog;
  const proc = spawnServer(opts.binary, ['--root', dir, '--config', 'config', '--env', 'ui', 'start'], {
    what: 'temporal UI server',
    log: (line) => log(`ui: ${line}`),
    detached: opts.detached,
    stopGraceMs: 5_000,
  });
  const url = `http://127.0.0.1:${opts.port}`;
  try {
    await waitForUi({ url, namespace: opts.namespace, timeoutMs: opts.timeoutMs ?? 60_000, abort: proc.failed });
  } catch (err) {
    await proc.stop();
    await removeDir();
    throw err;
  }
  return {
    url,
    process: proc,
    stop: async () => {
      await proc.stop();
      await removeDir();
    },
  };
}

/** Writes one configuration per service (they differ only in their metrics port) into `dir`/config. */
export async function writeClusterConfig(opts: {
  dir: string;
  db: ClusterDatabase;
  ports: ClusterPorts;
  logLevel?: string;
}): Promise<void> {
  const configDir = path.join(opts.dir, 'config');
  await fsp.mkdir(configDir, { recursive: true });
  const template = await fsp.readFile(path.join(TEMPLATE_DIR, 'config.template.yaml'), 'utf8');
  const dynamicConfig = path.join(opts.dir, 'dynamicconfig.yaml');
  await fsp.copyFile(path.join(TEMPLATE_DIR, 'dynamicconfig.yaml'), dynamicConfig);
  const { db, ports } = opts;
  for (const service of TEMPORAL_SERVICES) {
    const rendered = renderTemplate(template, {
      LOG_LEVEL: opts.logLevel ?? 'warn',
      HISTORY_SHARDS: 4,
      DB_HOST: db.host,
      DB_PORT: db.port,
      DB_USER: db.user,
      DB_PASSWORD: db.password,
      DB_NAME: db.name,
      VISIBILITY_DB_NAME: db.visibilityName,
      METRICS_PORT: ports.metrics[service],
      FRONTEND_PORT: ports.frontend,
      FRONTEND_HTTP_PORT: ports.frontendHttp,
      FRONTEND_MEMBERSHIP_PORT: ports.membership.frontend,
      HISTORY_PORT: ports.history,
      HISTORY_MEMBERSHIP_PORT: ports.membership.history,
      MATCHING_PORT: ports.matching,
      MATCHING_MEMBERSHIP_PORT: ports.membership.matching,
      WORKER_PORT: ports.worker,
      WORKER_MEMBERSHIP_PORT: ports.membership.worker,
      DYNAMIC_CONFIG_FILE: dynamicConfig,
    });
    await fsp.writeFile(path.join(configDir, `${service}.yaml`), rendered);
  }
}

export interface ClusterService {
  name: TemporalService;
  /** The running process; replaced by restart(). */
  process: ServerProcess;
  /** SIGKILL, as a crash would end it. */
  kill(): Promise<void>;
  /** Starts it again with the same configuration, once it is down. */
  restart(): Promise<void>;
}

export interface TemporalCluster {
  /** host:port of the frontend, the value for TEMPORAL_ADDRESS. */
  address: string;
  namespace: string;
  ports: ClusterPorts;
  db: ClusterDatabase;
  services: Record<TemporalService, ClusterService>;
  /** The Temporal UI, when started with `ui`. */
  uiUrl: string | null;
  /** Every service process id now running (the UI server's included). */
  pids(): number[];
  /** Stops the UI server and the services (internal worker, matching, history, frontend), removes `dir` if it made it, and releases the databases' lock. */
  stop(): Promise<void>;
}

export interface StartClusterOptions {
  /** Where the rendered configuration goes; default a fresh temp dir, removed on stop. */
  dir?: string;
  ports?: ClusterPorts;
  /** The application's database URL: the cluster's databases live on the same server. */
  databaseUrl: string;
  /** Base name of the two databases (`<name>`, `<name>_visibility`); default `temporal`. */
  databaseName?: string;
  fresh?: boolean;
  /** Also run the Temporal UI server (tooling/temporal-cluster/ui.template.yaml) on `ports.ui`, against the frontend. */
  ui?: boolean;
  namespace?: string;
  /** Retention of closed workflows; default 7 days, so a replay of last week's histories finds them. */
  retentionDays?: number;
  log?: LogFn;
  /** Own process groups, so a terminal's Ctrl-C reaches only the launcher, which stops the services in order. */
  detached?: boolean;
  readyTimeoutMs?: number;
}

/**
 * Databases and schema, configuration, then the four services in the safe order: the frontend
 * alone first (services started together race on writing the cluster metadata; one died on a
 * duplicate key in cluster_metadata_info), then history, matching and the internal worker, each
 * once the one before listens. Then the namespace and the search attributes, through the
 * frontend and the operator service, and a check that a workflow start carrying them is
 * accepted: only then may an API start workflows (docs/operations.md "Search attributes").
 */
export async function startTemporalCluster(opts: StartClusterOptions): Promise<TemporalCluster> {
  const log = opts.log ?? defaultLog;
  const namespace = opts.namespace ?? 'default';
  const ports = opts.ports ?? STANDARD_PORTS;
  const db = clusterDatabase(opts.databaseUrl, opts.databaseName);
  const ownDir = !opts.dir;
  const dir = opts.dir ? path.resolve(opts.dir) : await fsp.mkdtemp(path.join(os.tmpdir(), 'temporal-cluster-'));
  const readyTimeoutMs = opts.readyTimeoutMs ?? 120_000;

  // Before anything touches the databases (a --fresh start drops them): a cluster already on
  // them is the clearer thing to report than its taken ports.
  const lock = await lockClusterDatabases(db, log);
  const releaseOnFailure = async () => {
    if (ownDir) await fsp.rm(dir, { recursive: true, force: true });
    await lock.release();
  };
  let server: string;
  let uiServer: string | null = null;
  try {
    for (const [what, port] of [
      ['frontend', ports.frontend],
      ['history', ports.history],
      ['matching', ports.matching],
      ['worker', ports.worker],
      ...(opts.ui ? ([['UI', ports.ui]] as const) : []),
    ] as const) {
      if (await portAcceptsConnections(port)) {
        throw new Error(
          `port ${port} (Temporal ${what}) on 127.0.0.1 is already in use (a cluster or dev server left running?). Stop it, or use free ports (--free-ports).`,
        );
      }
    }

    const binaries = await resolveTemporalServerBinaries({ log });
    server = binaries.server;
    if (opts.ui) uiServer = await resolveTemporalUiServerBinary({ log });
    await prepareClusterDatabases({ sqlTool: binaries.sqlTool, db, fresh: opts.fresh, log });
    await writeClusterConfig({ dir, db, ports });
  } catch (err) {
    await releaseOnFailure();
    throw err;
  }

  // The port that opens once a service has started: its gRPC port; the internal worker serves
  // no gRPC, only its membership (ringpop) port.
  const readyPort: Record<TemporalService, number> = {
    frontend: ports.frontend,
    history: ports.history,
    matching: ports.matching,
    worker: ports.membership.worker,
  };
  const launch = (service: TemporalService): ServerProcess =>
    spawnServer(server, ['--root', dir, '--config', 'config', '--env', service, '--allow-no-auth', 'start', '--service', service], {
      what: `temporal ${service}`,
      log: (line) => log(`${service}: ${line}`),
      detached: opts.detached,
      stopGraceMs: 15_000,
    });
  const waitListening = async (service: TemporalService, proc: ServerProcess) => {
    const state: { failed: Error | null } = { failed: null };
    void proc.failed.then((err) => (state.failed = err));
    const deadline = Date.now() + readyTimeoutMs;
    while (!(await portAcceptsConnections(readyPort[service]))) {
      if (state.failed) throw state.failed;
      if (Date.now() > deadline)
        throw new Error(`temporal ${service} did not listen on ${readyPort[service]} within ${readyTimeoutMs / 1000} s`);
      await sleep(200);
    }
  };

  const services = {} as Record<TemporalService, ClusterService>;
  const started: ServerProcess[] = [];
  let ui: TemporalUi | null = null;
  const stopAll = async () => {
    await ui?.stop();
    for (const name of [...TEMPORAL_SERVICES].reverse()) await services[name]?.process.stop();
    for (const p of started) await p.stop();
  };
  try {
    for (const name of TEMPORAL_SERVICES) {
      const proc = launch(name);
      started.push(proc);
      const svc: ClusterService = {
        name,
        process: proc,
        kill: async () => {
          svc.process.child.kill('SIGKILL');
          await svc.process.exited;
          // Drops its exit hook: a soak that kills and restarts services many times keeps none behind.
          await svc.process.stop();
        },
        restart: async () => {
          svc.process = launch(name);
          started.push(svc.process);
          await waitListening(name, svc.process);
        },
      };
      services[name] = svc;
      await waitListening(name, proc);
      log(`${name} listening on 127.0.0.1:${readyPort[name]} (metrics :${ports.metrics[name]})`);
    }
    const address = `127.0.0.1:${ports.frontend}`;
    await registerNamespace({ address, namespace, retentionDays: opts.retentionDays ?? 7, timeoutMs: readyTimeoutMs, log });
    await waitForFrontend({ address, namespace, timeoutMs: readyTimeoutMs });
    await ensureSearchAttributesUsable({ address, namespace, timeoutMs: readyTimeoutMs, log });
    if (uiServer) {
      ui = await startTemporalUi({
        binary: uiServer,
        frontendAddress: address,
        port: ports.ui,
        namespace,
        dir,
        log,
        detached: opts.detached,
        timeoutMs: readyTimeoutMs,
      });
      started.push(ui.process);
      log(`UI listening on ${ui.url}`);
    }
    return {
      address,
      namespace,
      ports,
      db,
      services,
      uiUrl: ui?.url ?? null,
      pids: () => started.filter((p) => p.child.exitCode === null && p.child.signalCode === null && p.child.pid).map((p) => p.child.pid!),
      stop: async () => {
        await stopAll();
        if (ownDir) await fsp.rm(dir, { recursive: true, force: true });
        await lock.release();
      },
    };
  } catch (err) {
    await stopAll();
    await releaseOnFailure();
    throw err;
  }
}

/**
 * Until the UI server answers for the namespace through its API: that request goes on to the
 * frontend (DescribeNamespace), so an answer means the page will load with data, not just that
 * the port is open.
 */
export async function waitForUi(opts: { url: string; namespace: string; timeoutMs: number; abort?: Promise<Error> }): Promise<void> {
  const state: { failed: Error | null } = { failed: null };
  void opts.abort?.then((err) => (state.failed = err));
  const deadline = Date.now() + opts.timeoutMs;
  let last = '';
  for (;;) {
    if (state.failed) throw state.failed;
    try {
      const res = await fetch(`${opts.url}/api/v1/namespaces/${encodeURIComponent(opts.namespace)}`, {
        signal: AbortSignal.timeout(5_000),
      });
      if (res.ok) return;
      last = `HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`the Temporal UI at ${opts.url} did not answer for namespace ${opts.namespace}: ${last}`);
    await sleep(250);
  }
}

/** RegisterNamespace, retried while the frontend is still finding its history hosts. */
async function registerNamespace(opts: { address: string; namespace: string; retentionDays: number; timeoutMs: number; log: LogFn }) {
  const { Connection } = await import('@temporalio/client');
  const connection = await Connection.connect({ address: opts.address });
  const deadline = Date.now() + opts.timeoutMs;
  try {
    for (;;) {
      try {
        await connection.workflowService.describeNamespace({ namespace: opts.namespace });
        return;
      } catch {
        /* not there yet: register it */
      }
      try {
        await connection.workflowService.registerNamespace({
          namespace: opts.namespace,
          workflowExecutionRetentionPeriod: msToTs(`${opts.retentionDays} days`),
        });
        opts.log(`namespace ${opts.namespace} registered (retention ${opts.retentionDays} days)`);
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`could not register namespace ${opts.namespace}: ${(err as Error).message}`);
        await sleep(1_000);
      }
    }
  } finally {
    await connection.close();
  }
}

/**
 * Registers the search attributes through the operator service, then waits until a workflow
 * start carrying every one of them is accepted: the frontend validates against a namespace
 * cache that refreshes on its own schedule, and an API that started before it did had its first
 * signal-with-start refused ("no mapping defined for search attribute WorkspaceId"). The probe
 * is deleted at once, so no history or visibility record of it remains for a replay to meet.
 */
async function ensureSearchAttributesUsable(opts: { address: string; namespace: string; timeoutMs: number; log: LogFn }) {
  const { Client, Connection } = await import('@temporalio/client');
  // Imported here: lib/temporal reads the configuration at import, and a bench sets its
  // environment after importing this module.
  const { registerSearchAttributes } = await import('../lib/temporal/client');
  const connection = await Connection.connect({ address: opts.address });
  const client = new Client({ connection, namespace: opts.namespace });
  const deadline = Date.now() + opts.timeoutMs;
  try {
    for (;;) {
      const workflowId = `cluster-readiness-probe-${randomUUID()}`;
      try {
        // Inside the retry: a namespace just registered is "not found" until the frontend's cache has it.
        const added = await registerSearchAttributes(connection, opts.namespace);
        if (added.length) opts.log(`search attributes registered: ${added.join(', ')}`);
        // The publish workflow, as the API starts it, on a queue no worker polls: it never runs.
        await client.workflow.start(publishPostWorkflow, {
          taskQueue: 'cluster-readiness-probe',
          workflowId,
          args: [{ postId: workflowId }],
          typedSearchAttributes: SEARCH_ATTRIBUTE_KEYS.map((key) => ({ key, value: 'probe' }) as never),
        });
        await connection.workflowService.deleteWorkflowExecution({ namespace: opts.namespace, workflowExecution: { workflowId } });
        return;
      } catch (err) {
        if (Date.now() > deadline)
          throw new Error(`workflow starts with the search attributes are still refused: ${(err as Error).message}`);
        await sleep(1_000);
      }
    }
  } finally {
    await connection.close();
  }
}
