// `npm run cluster`: the production topology on one machine (docs/operations.md "The cluster
// tier"): the Temporal server as four processes on Postgres and the Temporal UI server in front
// of its frontend (tooling/temporalCluster.ts), then 2 API and 2 worker processes against it
// (tooling/serviceFleet.ts), sharing Postgres, Redis and the object store. Ctrl-C stops
// everything, services first, Temporal last. A second cluster on the same Temporal databases is
// refused while this one runs (an advisory lock held for its life).
//
// `npm run cluster:smoke` (--smoke): the same on free ports with databases of its own, one
// scheduled post published through the second API process, checked to be on the network
// exactly once and not early and found by its PostId in the UI (headless Chromium), a second
// cluster on the same databases checked to be refused, then everything stopped and checked
// gone. Exit 0 only if all of that held. CI runs it after the tests (.ci/run).
//
//   npm run cluster                    standard ports: Temporal 7233, its UI 8233, APIs 3000 and 3010
//   npm run cluster -- --fresh         drop the Temporal databases first
//   npm run cluster -- --temporal-only just the Temporal cluster (for `npm start` with TEMPORAL_ADDRESS)
//   npm run cluster -- --free-ports    every listener on a free port (printed)

import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    fresh: { type: 'boolean', default: false },
    'temporal-only': { type: 'boolean', default: false },
    'free-ports': { type: 'boolean', default: false },
    apis: { type: 'string', default: '2' },
    workers: { type: 'string', default: '2' },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});

if (opt.help) {
  console.log(`cluster: the Temporal server as separate services on Postgres with its UI (http://127.0.0.1:8233), and the
service scaled out against it. A second cluster on the same Temporal databases is refused while one runs.

Options:
  --fresh          drop and recreate the Temporal databases (temporal, temporal_visibility)
  --temporal-only  start only the Temporal cluster (and its UI)
  --free-ports     every listener on a free port instead of the standard ones
  --apis N         API processes (default 2); --workers N worker processes (default 2)
  --smoke          start on free ports with databases of its own, publish one post through the
                   second API process, find it in the UI, stop everything; exit 0 only if all of that held

Environment: DATABASE_URL (its Postgres server also holds the Temporal databases), REDIS_URL,
             S3_ENDPOINT (else the embedded object store), NETWORK_API_URL (else the network simulator).`);
  process.exit(0);
}

const count = (name: 'apis' | 'workers') => {
  const n = Number(opt[name]);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--${name} must be a whole number ≥ 1`);
    process.exit(2);
  }
  return n;
};
const API_COUNT = count('apis');
const WORKER_COUNT = count('workers');
const say = (line: string) => process.stderr.write(`[cluster] ${line}\n`);

// The smoke test owns its databases and task queue; lib/config reads the environment once, at
// import, so this comes before any module that loads it.
const smokeId = `${process.pid}`;
if (opt.smoke) {
  const base = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler');
  base.pathname = `/content_scheduler_cluster_smoke_${smokeId}`;
  Object.assign(process.env, {
    DATABASE_URL: base.toString(),
    TEMPORAL_TASK_QUEUE: `cluster-smoke-${smokeId}`,
    PUBLISH_DELAY_SECONDS: '0',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  });
}

const { config } = await import('../lib/config');
const { freePort } = await import('./ports');
const { ClusterRunningError, clusterDatabase, freeClusterPorts, startTemporalCluster, STANDARD_PORTS, dropClusterDatabases } =
  await import('./temporalCluster');
const { startFleet, allGone } = await import('./serviceFleet');
const { preflightOrExit } = await import('../lib/preflight');

type Stoppable = { stop(): Promise<unknown> };
const stack: Array<{ name: string; stop(): Promise<unknown> }> = [];
const push = (name: string, s: Stoppable) => stack.push({ name, stop: () => s.stop() });
let stopping: Promise<void> | null = null;
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    for (const s of stack.reverse()) {
      await s.stop().catch((err) => say(`stopping ${s.name}: ${(err as Error).message}`));
    }
  })();
  return stopping;
}

async function main(): Promise<number> {
  const freePorts = opt.smoke || opt['free-ports'];
  const startedAt = Date.now();
  if (opt.smoke) {
    const { recreateDatabase, dropDatabase } = await import('./databases');
    await recreateDatabase(config.databaseUrl);
    stack.push({
      name: 'smoke database',
      stop: async () => {
        const { closeDb } = await import('../lib/db');
        await closeDb();
        await dropDatabase(config.databaseUrl);
      },
    });
  } else {
    await preflightOrExit({ databaseUrl: config.databaseUrl, redisUrl: config.redisUrl });
  }

  const temporalLog = (line: string) => process.stderr.write(`[temporal] ${line}\n`);
  const databaseName = opt.smoke ? `temporal_smoke_${smokeId}` : 'temporal';
  // Dropped after everything else has stopped, also when the cluster failed to start.
  if (opt.smoke)
    stack.push({ name: 'Temporal databases', stop: () => dropClusterDatabases(clusterDatabase(config.databaseUrl, databaseName)) });
  const cluster = await startTemporalCluster({
    databaseUrl: config.databaseUrl,
    databaseName,
    fresh: opt.fresh || opt.smoke,
    ports: freePorts ? await freeClusterPorts() : STANDARD_PORTS,
    namespace: config.temporalNamespace,
    ui: true,
    // The smoke run shows the services' output only when something fails.
    log: opt.smoke ? () => undefined : temporalLog,
    detached: true,
  });
  push('Temporal cluster', cluster);
  say(
    `Temporal cluster up in ${((Date.now() - startedAt) / 1000).toFixed(0)} s: frontend ${cluster.address}, ` +
      `UI ${cluster.uiUrl}, databases ${cluster.db.name} and ${cluster.db.visibilityName}, metrics ${Object.values(cluster.ports.metrics).join(', ')}`,
  );
  if (opt['temporal-only']) return -1;

  const env: NodeJS.ProcessEnv = { ...process.env, TEMPORAL_ADDRESS: cluster.address, TEMPORAL_NAMESPACE: cluster.namespace };
  if (!config.s3.endpoint) {
    const { startObjectStore, objectStoreEnv } = await import('./objectStoreServer');
    const dataDir = opt.smoke ? undefined : path.join(path.resolve(config.dataDir), 's3');
    const store = await startObjectStore({
      dataDir,
      port: freePorts ? 0 : config.s3.serverPort,
      accessKeyId: config.s3.accessKeyId,
      secretAccessKey: config.s3.secretAccessKey,
      detached: true,
      log: opt.smoke ? () => undefined : (l) => process.stderr.write(`[s3] ${l}\n`),
    });
    push('object store', store);
    Object.assign(env, objectStoreEnv(store));
  }
  let simulator: import('../sim/network/server').NetworkSimulator | null = null;
  if (!config.network.apiUrl) {
    const { startNetworkSimulator } = await import('../sim/network/server');
    simulator = await startNetworkSimulator({ port: freePorts ? await freePort() : config.network.simulatorPort });
    push('network simulator', { stop: () => simulator!.close() });
    env.NETWORK_API_URL = simulator.url;
  }

  const apiPorts = [];
  for (let i = 0; i < API_COUNT; i++) {
    apiPorts.push(
      freePorts
        ? { port: await freePort(), mcpPort: await freePort(), metricsPort: await freePort() }
        : { port: config.port + 10 * i, mcpPort: config.mcpPort + 10 * i, metricsPort: config.metricsPort + 10 * i },
    );
  }
  const workerPorts = [];
  for (let i = 0; i < WORKER_COUNT; i++) workerPorts.push(freePorts ? await freePort() : config.workerMetricsPort + 10 * i);
  // Behind a load balancer every API process answers for one public origin: the first one's.
  env.PUBLIC_URL ??= `http://localhost:${apiPorts[0]!.port}`;
  env.MCP_PUBLIC_URL ??= `http://localhost:${apiPorts[0]!.mcpPort}`;
  const fleet = await startFleet({
    env,
    apis: apiPorts,
    workers: workerPorts,
    log: opt.smoke ? () => undefined : (line) => process.stderr.write(`[${line.replace(/: /, '] ')}\n`),
  });
  push('API and worker processes', fleet);

  if (opt.smoke) return smoke({ fleet, cluster, simulator: simulator!, pids: () => [...fleet.pids(), ...cluster.pids()] });

  process.stdout.write(
    [
      '',
      `Content Scheduling Service, cluster tier (${API_COUNT} API + ${WORKER_COUNT} worker processes)`,
      ...fleet.apis.map((a) => `  API ${a.index}        http://localhost:${a.port}  (MCP :${a.mcpPort}, metrics :${a.metricsPort})`),
      ...fleet.workers.map((w) => `  worker ${w.index}     metrics :${w.metricsPort}`),
      `  Temporal     ${cluster.address} (frontend; history :${cluster.ports.history}, matching :${cluster.ports.matching}, worker :${cluster.ports.worker})`,
      `  Temporal UI  ${cluster.uiUrl}  (find a post's workflow by PostId; docs/operations.md "What the workflows show")`,
      `  Network      ${env.NETWORK_API_URL}`,
      `  Object store ${env.S3_ENDPOINT}`,
      '  Ctrl-C stops everything.',
      '',
    ].join('\n') + '\n',
  );
  return -1;
}

/** The smoke check proper: one scheduled post through the second API process, published exactly once. */
async function smoke(opts: {
  fleet: import('./serviceFleet').Fleet;
  cluster: import('./temporalCluster').TemporalCluster;
  simulator: import('../sim/network/server').NetworkSimulator;
  pids: () => number[];
}): Promise<number> {
  const { fleet, simulator } = opts;
  const failures: string[] = [];
  const { createWorkspace, issueApiKey } = await import('../admin/provision');
  const { connectedPersonalProject } = await import('../admin/simulatedAccounts');
  const { db } = await import('../lib/db');
  const ws = await createWorkspace({ name: 'Cluster smoke', plan: 'BUSINESS' });
  const key = await issueApiKey({ workspaceId: ws.id, scopes: ['write'], name: 'cluster smoke' });
  const { project } = await connectedPersonalProject(simulator.control, ws.id, {
    personId: 'cluster-smoke',
    name: 'Cluster Smoke',
    vanityName: 'cluster-smoke',
  });

  // Through the second API process: the one a load balancer would hand the request to next.
  const api = fleet.apis[1] ?? fleet.apis[0]!;
  const due = Date.now() + 15_000;
  const res = await fetch(`http://127.0.0.1:${api.port}/v1/posts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ projectId: project.id, content: 'Cluster smoke post', scheduledFor: new Date(due).toISOString() }),
  });
  const body = (await res.json()) as { data?: { id: string } };
  if (res.status !== 200 || !body.data) {
    failures.push(`create through api ${api.index}: ${res.status} ${JSON.stringify(body)}`);
  } else {
    const postId = body.data.id;
    say(`post ${postId} scheduled through api ${api.index} (:${api.port}) for ${new Date(due).toISOString()}`);
    const deadline = due + 120_000;
    let row: { status: string; workflow_synced_version: number; schedule_version: number } | undefined;
    let onNetwork: Awaited<ReturnType<typeof simulator.control.listPosts>>['posts'] = [];
    while (Date.now() < deadline) {
      row = await db()('posts').where({ id: postId }).first('status', 'workflow_synced_version', 'schedule_version');
      onNetwork = (await simulator.control.listPosts({ limit: 100 })).posts.filter((p) => p.reference === postId);
      if (row?.status === 'published' && onNetwork.length) break;
      await sleep(1_000);
    }
    // A late duplicate (a second worker, a retried activity) would show up now.
    await sleep(5_000);
    onNetwork = (await simulator.control.listPosts({ limit: 100 })).posts.filter((p) => p.reference === postId);
    if (row?.status !== 'published') failures.push(`post ${postId} is ${row?.status ?? 'missing'}, not published`);
    if (onNetwork.length !== 1) failures.push(`post ${postId} is on the network ${onNetwork.length} times, not once`);
    else if (Date.parse(onNetwork[0]!.receivedAt) < due - 1_000)
      failures.push(`post ${postId} published at ${onNetwork[0]!.receivedAt}, before its due time ${new Date(due).toISOString()}`);
    else
      say(
        `published once at ${onNetwork[0]!.receivedAt} (${((Date.parse(onNetwork[0]!.receivedAt) - due) / 1000).toFixed(1)} s after due)`,
      );
    // The API's own signal-with-start started the workflow, not the reconciler (the issue's race).
    if (row && row.workflow_synced_version < row.schedule_version) failures.push(`post ${postId}: the API did not start its workflow`);
    await checkUi(opts.cluster, postId, failures);
  }
  await checkSecondClusterRefused(opts.cluster, failures);

  const pids = opts.pids();
  await stopAll();
  await sleep(500);
  const left = pids.filter((pid) => !allGone([pid]));
  if (left.length) failures.push(`processes left behind after the stop: ${left.join(', ')}`);
  else
    say(
      `stopped: ${pids.length} processes (4 Temporal services, the UI server, ${fleet.apis.length} APIs, ${fleet.workers.length} workers) all gone`,
    );
  for (const f of failures) say(`FAIL: ${f}`);
  say(failures.length ? 'smoke FAILED' : 'smoke passed');
  return failures.length ? 1 : 0;
}

/**
 * The UI answers through its own API for the post's workflow (found by the PostId search
 * attribute, as an operator would), then shows it in the browser: its summary and, the workflow
 * having published, its current details.
 */
async function checkUi(cluster: import('./temporalCluster').TemporalCluster, postId: string, failures: string[]): Promise<void> {
  const uiUrl = cluster.uiUrl!;
  const query = encodeURIComponent(`PostId="${postId}"`);
  try {
    const res = await fetch(`${uiUrl}/api/v1/namespaces/${encodeURIComponent(cluster.namespace)}/workflows?query=${query}`);
    const body = await res.text();
    if (!res.ok || !body.includes(`publish-${postId}`))
      failures.push(`the UI's API did not list publish-${postId}: ${res.status} ${body.slice(0, 300)}`);
  } catch (err) {
    failures.push(`the UI at ${uiUrl} did not answer: ${(err as Error).message}`);
    return;
  }
  const { launchBrowser } = await import('../test/support/browser');
  const { findPostWorkflowInUi } = await import('../test/support/temporalUi');
  const browser = await launchBrowser();
  try {
    await findPostWorkflowInUi(browser.context, {
      uiUrl,
      namespace: cluster.namespace,
      postId,
      expect: [`Publish post ${postId}`, 'Published as '],
    });
    say(`the UI at ${uiUrl} shows the post's workflow, found by its PostId, with its summary and current details`);
  } catch (err) {
    failures.push(`the UI in the browser: ${(err as Error).message}`);
  } finally {
    await browser.close();
  }
}

/** A second cluster on the running one's databases is refused before it touches them. */
async function checkSecondClusterRefused(cluster: import('./temporalCluster').TemporalCluster, failures: string[]) {
  try {
    const second = await startTemporalCluster({
      databaseUrl: config.databaseUrl,
      databaseName: cluster.db.name,
      ports: await freeClusterPorts(),
      log: () => undefined,
    });
    await second.stop();
    failures.push(`a second cluster started on the databases ${cluster.db.name} of a running one`);
  } catch (err) {
    if (err instanceof ClusterRunningError) say(`a second cluster on the same databases is refused: ${err.message}`);
    else failures.push(`a second cluster failed, but not with the refusal: ${(err as Error).message}`);
  }
}

let interrupts = 0;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (++interrupts > 1) process.exit(1);
    say('stopping');
    void stopAll().then(() => process.exit(0));
  });
}

main()
  .then(async (code) => {
    if (code >= 0) {
      await stopAll();
      process.exit(code);
    }
    // Running until interrupted; a child that dies on its own is the operator's to see in the log.
  })
  .catch(async (err) => {
    say(`failed: ${err instanceof Error ? err.message : String(err)}`);
    await stopAll();
    process.exit(1);
  });
