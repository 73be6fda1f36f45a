// Mocha's global fixtures for `npm test` (plain mocha, configured by .mocharc.yml, so every mocha
// flag passes through as written: `npm test -- --grep X --bail test/publishing`). Each run
// creates and migrates its own database (content_scheduler_test_<pid>), uses Redis database 15,
// runs a Temporal dev server (in memory) and the network simulator on free ports, and removes
// them all afterwards.
//
// Mocha imports the spec files before it runs mochaGlobalSetup, and lib/config.ts reads the
// environment once at import, so the environment (ports included) is settled here at module
// load; the services themselves start in mochaGlobalSetup. Set TEST_DATABASE_URL,
// TEMPORAL_ADDRESS, NETWORK_API_URL or LLM_BASE_URL to use services of your own instead, and
// TEST_DATABASE_ICU_LOCALE (e.g. en-US) to run on a database that orders text by that locale, as
// most deployments' databases do, rather than in the server's default (here C.UTF-8).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createEmptyDatabase, dropDatabase, withMaintenanceDb } from '../../tooling/databases';
import { freePort } from '../../tooling/ports';

const env = process.env;
// Mocha's --parallel workers load this file again: they inherit the run's environment as set
// by the main process (whose global setup started the services) and must not pick their own.
const inherited = env.CONTENT_SCHEDULER_TEST_RUN === String(process.ppid);
env.CONTENT_SCHEDULER_TEST_RUN = String(process.pid);
env.NODE_ENV = 'test';
// Each run gets its own database (named after its pid), so concurrent runs on one machine
// never drop each other's data; it is dropped at the end, and those of dead runs at the start.
const ownDatabase = !env.TEST_DATABASE_URL;
if (!inherited) env.DATABASE_URL = env.TEST_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/content_scheduler_test_${process.pid}`;
env.REDIS_URL = env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
env.LOG_LEVEL ??= 'error';
env.WEBHOOK_ALLOW_LOOPBACK = '1';
env.PUBLISH_DELAY_SECONDS ??= '0';
env.RECONCILE_INTERVAL_SECONDS ??= '2';
env.PUBLISH_RETRY_BASE_SECONDS ??= '1';
env.SECRET_KEY ??= 'test-secret-key-0123456789abcdef';
env.ENCRYPTION_KEY ??= 'test-encryption-key';
// Processes the tests spawn expose /metrics on a free port each, so concurrent runs never collide.
env.METRICS_PORT ??= '0';
env.WORKER_METRICS_PORT ??= '0';
// Workers in the tests never poll the production queue name (even when a developer's shell sets
// TEMPORAL_TASK_QUEUE): the API starts workflows on this run's own queue, and the workflow tier
// (test/workflows) uses a queue per test on top.
if (!inherited) env.TEMPORAL_TASK_QUEUE = `content-scheduler-test-${process.pid}`;

const ownTemporal = !inherited && !env.TEMPORAL_ADDRESS;
const temporalPort = ownTemporal ? await freePort() : 0;
if (ownTemporal) env.TEMPORAL_ADDRESS = `127.0.0.1:${temporalPort}`;
const ownSimulator = !inherited && !env.NETWORK_API_URL;
const simulatorPort = ownSimulator ? await freePort() : 0;
if (ownSimulator) env.NETWORK_API_URL = `http://127.0.0.1:${simulatorPort}`;
// The video-transcript simulator (sim/youtube), as for the network simulator.
const ownYoutubeSim = !inherited && !env.YOUTUBE_TRANSCRIPT_URL;
const youtubeSimPort = ownYoutubeSim ? await freePort() : 0;
if (ownYoutubeSim) env.YOUTUBE_TRANSCRIPT_URL = `http://127.0.0.1:${youtubeSimPort}`;
// The LLM simulator (sim/llm), as `npm start` runs it, so the writer's real HTTP client runs in
// every process the tests start (issue 29 item 5), and the images client with it; suites that
// script faults run stubs of their own.
const ownLlmSim =
  !inherited && !env.LLM_BASE_URL && (env.LLM_WRITER !== 'builtin' || (env.IMAGES_GENERATOR !== 'builtin' && !env.IMAGES_BASE_URL));
const llmSimPort = ownLlmSim ? await freePort() : 0;
if (ownLlmSim) env.LLM_BASE_URL = `http://127.0.0.1:${llmSimPort}/v1`;
// The embedded S3-compatible store (tooling/objectStoreServer.ts) on a free port and a temp dir;
// its address and keys are settled now, for the same reason as the ports above.
const ownObjectStore = !inherited && !env.S3_ENDPOINT;
const objectStorePort = ownObjectStore ? await freePort() : 0;
if (ownObjectStore) {
  Object.assign(env, {
    S3_ENDPOINT: `http://127.0.0.1:${objectStorePort}`,
    S3_ACCESS_KEY_ID: 'test-s3',
    S3_SECRET_ACCESS_KEY: 'test-s3-secret-key',
    S3_FORCE_PATH_STYLE: 'true',
  });
}

// The transcription simulator (sim/transcription) for file sources, unless TRANSCRIPTION_URL
// names an API of the caller's own; it runs in this process and is reached over HTTP.
const ownTranscription = !inherited && !env.TRANSCRIPTION_URL;
const transcriptionPort = ownTranscription ? await freePort() : 0;
if (ownTranscription) env.TRANSCRIPTION_URL = `http://127.0.0.1:${transcriptionPort}/v1`;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function resetDatabase(url: string) {
  await withMaintenanceDb(url, async (client, name) => {
    const stale = await client.query(`select datname from pg_database where datname ~ '^content_scheduler_test_[0-9]+$'`);
    for (const { datname } of stale.rows) {
      if (datname !== name && !isAlive(Number(datname.split('_').pop())))
        await client.query(`drop database if exists ${pg.escapeIdentifier(datname)} with (force)`);
    }
  });
  await createEmptyDatabase(url, { icuLocale: process.env.TEST_DATABASE_ICU_LOCALE || undefined });
}

let stopTemporal = async () => {};
let stopObjectStore = async () => {};
let stopSimulator = async () => {};
let stopTranscription = async () => {};
let stopYoutube = async () => {};
let stopLlmSim = async () => {};
let workerBundleReady: Promise<void> = Promise.resolve();
let workerBundleDir = '';

/**
 * The worker processes the tests start (IsolatedStack, `npm start`, the MCP task suites) would
 * each bundle the workflow source at start, several CPU-seconds apiece. The run bundles it once,
 * from the source as it is now (so no older build can run), in the background while the first
 * suites run; once it is written, WORKFLOW_BUNDLE_PATH hands it to every worker process started
 * after that (one started before bundles at start, as before). This process read its own
 * configuration at import, before this: its in-process workers keep bundling the source
 * (test/workflows/bundle.test.ts), and reuse this very bundle, which workflowBundle memoizes.
 */
function shareWorkflowBundle(): Promise<void> {
  return (async () => {
    const { tracingRequested } = await import('../../lib/telemetry');
    // A worker that traces loads the traced bundle; leave those to bundle their own.
    if (env.WORKFLOW_BUNDLE_PATH || tracingRequested(env)) return;
    const { workflowBundle } = await import('../../workers/worker');
    const { code } = await workflowBundle();
    workerBundleDir = await mkdtemp(path.join(os.tmpdir(), 'content-scheduler-test-bundle-'));
    const file = path.join(workerBundleDir, 'workflow-bundle.js');
    await writeFile(file, code);
    env.WORKFLOW_BUNDLE_PATH = file;
  })().catch((err) => console.warn(`[test] worker processes bundle the workflows themselves: ${err}`));
}

export async function mochaGlobalSetup() {
  const { preflightOrExit } = await import('../../lib/preflight');
  await preflightOrExit({ databaseUrl: env.DATABASE_URL!, redisUrl: env.REDIS_URL! });
  await resetDatabase(env.DATABASE_URL!);
  const { createKnex, migrateLatest } = await import('../../lib/db');
  const k = createKnex(env.DATABASE_URL!);
  await migrateLatest(k);
  await k.destroy();
  // Redis is not flushed: concurrent runs share it, and its keys are scoped by random ids.

  const services: Array<Promise<void>> = [];
  if (ownTemporal) {
    services.push(
      (async () => {
        const { resolveTemporalBinary, startTemporalDevServer } = await import('../../tooling/temporalBinary');
        const binary = await resolveTemporalBinary({ log: (l) => console.log(`[temporal] ${l}`) });
        const server = await startTemporalDevServer({ binary, port: temporalPort, uiPort: null, dbFile: null, log: () => {} });
        stopTemporal = () => server.stop();
        console.log(`Temporal dev server for the tests at ${server.address}`);
      })(),
    );
  }
  if (ownObjectStore) {
    services.push(
      (async () => {
        const { startObjectStore } = await import('../../tooling/objectStoreServer');
        const store = await startObjectStore({
          port: objectStorePort,
          accessKeyId: env.S3_ACCESS_KEY_ID,
          secretAccessKey: env.S3_SECRET_ACCESS_KEY,
          log: () => {},
        });
        stopObjectStore = () => store.stop();
      })(),
    );
  }
  if (ownSimulator) {
    // The network simulator runs as its own process, as under `npm start`; tests script it
    // through its control API (sim/network/control.ts).
    services.push(
      (async () => {
        const { launch } = await import('../../tooling/launcher');
        const sim = await launch({
          entry: 'sim/network/main.ts',
          name: 'network simulator',
          env: { NETWORK_SIMULATOR_PORT: String(simulatorPort) },
          ready: { line: /listening/ },
          stopGraceMs: 5_000,
          onLine: (line, stream) => stream === 'stderr' && process.stderr.write(`${line}\n`),
        });
        stopSimulator = async () => void (await sim.stop());
      })(),
    );
  }
  if (ownTranscription) {
    services.push(
      (async () => {
        const { startTranscriptionSim } = await import('../../sim/transcription/server');
        const sim = await startTranscriptionSim({ port: transcriptionPort });
        stopTranscription = () => sim.close();
      })(),
    );
  }
  if (ownYoutubeSim) {
    services.push(
      (async () => {
        const { startYoutubeSim } = await import('../../sim/youtube/server');
        const sim = await startYoutubeSim({ port: youtubeSimPort });
        stopYoutube = () => sim.close();
      })(),
    );
  }
  if (ownLlmSim) {
    services.push(
      (async () => {
        const { startLlmStub } = await import('../../sim/llm/server');
        const sim = await startLlmStub({ port: llmSimPort });
        stopLlmSim = () => sim.close();
      })(),
    );
  }
  await Promise.all(services);
  workerBundleReady = shareWorkflowBundle();
}

export async function mochaGlobalTeardown() {
  await workerBundleReady;
  if (workerBundleDir) await rm(workerBundleDir, { recursive: true, force: true });
  await stopSimulator();
  await stopTemporal();
  await stopObjectStore();
  await stopTranscription();
  await stopYoutube();
  await stopLlmSim();
  if (ownDatabase && !inherited) await dropDatabase(env.DATABASE_URL!).catch(() => {});
}
