// `npm start`: the whole service on one machine (ARCHITECTURE.md, Processes). Postgres and Redis
// are expected to be running; Temporal, the object store and the simulators (network, LLM,
// transcription, YouTube transcripts) are started here unless their address variables point
// elsewhere. Which is which, and on what port, is lib/config.ts serviceAddresses, the same
// derivation the API, the worker and bin/admin use.

import fs from 'node:fs';
import path from 'node:path';
import { config, serviceAddresses, serviceEnv } from '../lib/config';
import { exitWithOneLine, preflightOrExit } from '../lib/preflight';
import { registerSearchAttributes } from '../lib/temporal/client';
import { echoLines, launch, type Launched, type LaunchOptions } from '../tooling/launcher';
import { portAcceptsConnections } from '../tooling/ports';
import {
  type DevServer,
  type SdkDevServer,
  resolveTemporalBinary,
  startDownloadedDevServer,
  startTemporalDevServer,
  waitForFrontend,
} from '../tooling/temporalBinary';
import { BinaryNotFoundError } from '../tooling/serverProcess';

const CHILD_STOP_GRACE_MS = 15_000;
const SIM_READY_TIMEOUT_MS = 30_000;
// The API migrates the database before it listens.
const API_READY_TIMEOUT_MS = 120_000;

function say(line: string): void {
  process.stderr.write(`[start] ${line}\n`);
}

const children: Launched[] = [];
let temporal: { stop(): Promise<void> } | null = null;
let temporalStarting: Promise<unknown> | null = null;
let objectStoreServer: import('../tooling/objectStoreServer').ObjectStoreServer | null = null;
let shuttingDown = false;

/**
 * One child (tooling/launcher.ts), its lines prefixed with its name. In a process group of its
 * own: a terminal's Ctrl-C then reaches only this process, which stops the children in order
 * (users of Temporal first, Temporal last) instead of all at once, and the SIGKILL after the
 * grace period reaches whatever the child spawned, which would otherwise hold its ports.
 */
async function startChild(name: string, options: LaunchOptions): Promise<Launched> {
  const child = await launch({ name, ...options, group: true, stopGraceMs: CHILD_STOP_GRACE_MS, onLine: echoLines(`[${name}]`) });
  children.push(child);
  void child.exited.then(({ code, signal, error }) => {
    if (shuttingDown) return;
    void shutdown(
      1,
      error
        ? `${name} could not be started: ${error.message}`
        : `${name} exited unexpectedly (${signal ?? `code ${code}`}); stopping the others`,
    );
  });
  return child;
}

async function stopChild(child: Launched): Promise<void> {
  if (!child.running()) return;
  const slow = setTimeout(() => say(`${child.name} did not stop within ${CHILD_STOP_GRACE_MS / 1000} s; killing it`), CHILD_STOP_GRACE_MS);
  const { code, signal } = await child.stop();
  clearTimeout(slow);
  say(code === 0 ? `${child.name} stopped` : `${child.name} ended with ${signal ?? `code ${code}`}`);
}

async function shutdown(code: number, reason?: string): Promise<never> {
  if (shuttingDown) return new Promise<never>(() => undefined);
  shuttingDown = true;
  if (reason) say(reason);
  else say('stopping');
  await Promise.all(children.map(stopChild));
  // Temporal goes last so the worker can finish or hand back its tasks cleanly.
  if (temporalStarting) await temporalStarting.catch(() => undefined);
  if (objectStoreServer)
    await objectStoreServer.stop().then(
      () => say('object store stopped'),
      () => undefined,
    );
  if (temporal)
    await temporal.stop().then(
      () => say('temporal stopped'),
      (err) => say(`stopping Temporal: ${(err as Error).message}`),
    );
  process.exit(code);
}

// A terminal's Ctrl-C signals the whole foreground group: npm gets it as well as this process,
// and npm forwards its copy, so one press arrives two or more times within milliseconds. Only
// an interrupt well after the first is a second press.
const REPEAT_AFTER_MS = 1_000;
let firstInterruptAt: number | null = null;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (firstInterruptAt === null) {
      firstInterruptAt = Date.now();
      void shutdown(0);
      return;
    }
    if (Date.now() - firstInterruptAt < REPEAT_AFTER_MS) return;
    say('second interrupt: killing everything now');
    process.exit(1); // the 'exit' hooks kill the children (tooling/launcher.ts) and the Temporal server
  });
}
process.on('uncaughtException', (err) => {
  say(`internal error: ${err.message}`);
  void shutdown(1);
});
process.on('unhandledRejection', (err) => {
  say(`internal error: ${err instanceof Error ? err.message : String(err)}`);
  void shutdown(1);
});

/** Resolves true once 127.0.0.1:port accepts connections, false on timeout or when the child dies. */
function waitForPort(child: Launched, port: number, timeoutMs: number): Promise<boolean> {
  return child.waitReady({ port }, timeoutMs).then(
    () => true,
    () => false,
  );
}

async function refuseTakenPort(port: number, what: string, escape: string): Promise<void> {
  if (await portAcceptsConnections(port)) {
    // Through shutdown rather than a bare exit, so an embedded Temporal already running stops cleanly.
    await shutdown(1, `${what}: port ${port} on 127.0.0.1 is already in use (an earlier run still going?). Stop it or ${escape}.`);
  }
}

async function startTemporal(dataDir: string, port: number): Promise<string> {
  const uiPort = config.temporalUiPort;
  const dbFile = path.join(dataDir, 'temporal.db');
  const log = (line: string) => process.stderr.write(`[temporal] ${line}\n`);

  let binary: string | null = null;
  try {
    binary = await resolveTemporalBinary({ log });
  } catch (err) {
    if (!(err instanceof BinaryNotFoundError)) throw err;
    log(`${err.message}`);
    log('trying the Temporal SDK download instead (needs internet access)');
  }

  const starting: Promise<DevServer | SdkDevServer> = binary
    ? startTemporalDevServer({ binary, port, uiPort, dbFile, namespace: config.temporalNamespace, log, detached: true })
    : startDownloadedDevServer({ port, uiPort, dbFile, namespace: config.temporalNamespace });
  temporalStarting = starting;
  try {
    const server = await starting;
    temporal = server;
    if ('exited' in server) {
      void server.exited.then(({ code, signal }) => {
        if (!shuttingDown) void shutdown(1, `temporal exited unexpectedly (${signal ?? `code ${code}`}); stopping the others`);
      });
    }
    log(`dev server on ${server.address}, state in ${dbFile}`);
    return server.address;
  } catch (err) {
    // Multi-line causes (the server's last output) were already streamed above.
    const first = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    exitWithOneLine(`TEMPORAL_ADDRESS is unset and the embedded Temporal dev server did not start: ${first}`);
  } finally {
    temporalStarting = null;
  }
}

/**
 * Starts one local simulator child (when its real service's address is unset), waits for its
 * port and hands its address to the API and worker through `urlEnv`. Null when shutting down.
 */
async function startSimulator(
  childEnv: NodeJS.ProcessEnv,
  sim: {
    name: string;
    script: string;
    port: number;
    what: string;
    escape: string;
    env: NodeJS.ProcessEnv;
    urlEnv: string;
    path?: string;
  },
): Promise<string | null> {
  await refuseTakenPort(sim.port, sim.what, sim.escape);
  const child = await startChild(sim.name, { entry: sim.script, env: { ...childEnv, ...sim.env } });
  if (!(await waitForPort(child, sim.port, SIM_READY_TIMEOUT_MS))) {
    if (shuttingDown) return null;
    await shutdown(1, `${sim.name} did not listen on port ${sim.port} within ${SIM_READY_TIMEOUT_MS / 1000} s; stopping`);
  }
  const url = `http://127.0.0.1:${sim.port}${sim.path ?? ''}`;
  childEnv[sim.urlEnv] = url;
  return url;
}

async function main(): Promise<void> {
  await preflightOrExit({ databaseUrl: config.databaseUrl, redisUrl: config.redisUrl });

  const dataDir = path.resolve(config.dataDir);
  fs.mkdirSync(dataDir, { recursive: true });

  const services = serviceAddresses();
  // Every address the children need, the local ones included; each is set again below from the
  // server as it started.
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...serviceEnv() };

  let temporalUi: string | null = null;
  if (!services.temporal.local) {
    // Same reasoning as the Postgres and Redis preflight: one line now beats a gRPC deadline
    // stack trace from the worker later.
    try {
      await waitForFrontend({ address: services.temporal.address, namespace: config.temporalNamespace, timeoutMs: 15_000 });
    } catch (err) {
      exitWithOneLine(
        `TEMPORAL_ADDRESS: cannot reach Temporal namespace "${config.temporalNamespace}" at ${services.temporal.address} ` +
          `(${err instanceof Error ? err.message.split('\n')[0] : String(err)}). Start it, or unset TEMPORAL_ADDRESS to run the embedded dev server.`,
      );
    }
    // The namespace's search attributes before the API starts (docs/operations.md "Search
    // attributes"): the API refuses to start without them, and the worker starts after it.
    try {
      const { Connection } = await import('@temporalio/client');
      const connection = await Connection.connect({ address: services.temporal.address });
      try {
        const added = await registerSearchAttributes(connection);
        if (added.length) say(`registered the search attributes ${added.join(', ')} on namespace "${config.temporalNamespace}"`);
      } finally {
        await connection.close();
      }
    } catch (err) {
      exitWithOneLine(`TEMPORAL_ADDRESS: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
    say(`using Temporal at ${services.temporal.address}`);
  } else {
    childEnv.TEMPORAL_ADDRESS = await startTemporal(dataDir, services.temporal.port);
    temporalUi = `http://localhost:${config.temporalUiPort}`;
  }
  if (shuttingDown) return;

  if (services.objectStore.local) {
    // The embedded object store (tooling/objectStoreServer.ts), data under DATA_DIR/s3.
    const { startObjectStore, objectStoreEnv } = await import('../tooling/objectStoreServer');
    try {
      objectStoreServer = await startObjectStore({
        dataDir: path.join(dataDir, 's3'),
        port: services.objectStore.port,
        accessKeyId: config.s3.accessKeyId,
        secretAccessKey: config.s3.secretAccessKey,
        detached: true,
        log: (l) => process.stderr.write(`[s3] ${l}\n`),
      });
    } catch (err) {
      return void (await shutdown(
        1,
        `S3_ENDPOINT is unset and the embedded object store did not start: ${(err as Error).message.split('\n')[0]}`,
      ));
    }
    Object.assign(childEnv, objectStoreEnv(objectStoreServer));
  }
  if (shuttingDown) return;

  const simUrl = !services.network.local
    ? null
    : await startSimulator(childEnv, {
        name: 'network-sim',
        script: 'sim/network/main.ts',
        port: services.network.port,
        what: 'network simulator',
        escape: 'set NETWORK_SIMULATOR_PORT, or NETWORK_API_URL to use a running one',
        // Local runs show analytics that move: published posts gain metrics over time (docs/analytics.md).
        env: { NETWORK_SIM_METRICS_GROWTH: process.env.NETWORK_SIM_METRICS_GROWTH ?? '1' },
        urlEnv: 'NETWORK_API_URL',
      });
  if (shuttingDown) return;

  // Generation (docs/generation.md) and image generation (docs/media.md) go through the real
  // LLM and images clients: to the simulator unless LLM_BASE_URL (IMAGES_BASE_URL) names an API,
  // or LLM_WRITER=builtin (IMAGES_GENERATOR=builtin) asks for the in-process writer (renderer).
  const llmSim = services.llm?.local ? services.llm : services.images?.local ? services.images : null;
  const llmSimUrl = !llmSim
    ? null
    : await startSimulator(childEnv, {
        name: 'llm-sim',
        script: 'sim/llm/main.ts',
        port: llmSim.port,
        what: 'LLM simulator',
        escape: 'set LLM_STUB_PORT, LLM_BASE_URL to use an API, or LLM_WRITER=builtin',
        env: { LLM_STUB_PORT: String(llmSim.port) },
        urlEnv: 'LLM_BASE_URL',
        path: '/v1',
      });
  if (shuttingDown) return;

  // File sources transcribe audio and video (docs/sources.md): the local simulator unless
  // TRANSCRIPTION_URL names a real API.
  const transcriptionUrl = !services.transcription.local
    ? null
    : await startSimulator(childEnv, {
        name: 'transcription-sim',
        script: 'sim/transcription/main.ts',
        port: services.transcription.port,
        what: 'transcription simulator',
        escape: 'set TRANSCRIPTION_SIMULATOR_PORT, or TRANSCRIPTION_URL to use a real API',
        env: { TRANSCRIPTION_SIMULATOR_PORT: String(services.transcription.port) },
        urlEnv: 'TRANSCRIPTION_URL',
        path: '/v1',
      });
  if (shuttingDown) return;

  // The video-transcript simulator behind YouTube knowledge ingest (docs/knowledge.md).
  const youtubeUrl = !services.youtube.local
    ? null
    : await startSimulator(childEnv, {
        name: 'youtube-sim',
        script: 'sim/youtube/main.ts',
        port: services.youtube.port,
        what: 'YouTube transcript simulator',
        escape: 'set YOUTUBE_SIMULATOR_PORT, or YOUTUBE_TRANSCRIPT_URL to use a transcript service',
        env: { YOUTUBE_SIMULATOR_PORT: String(services.youtube.port) },
        urlEnv: 'YOUTUBE_TRANSCRIPT_URL',
      });
  if (shuttingDown) return;

  await refuseTakenPort(config.port, 'PORT', 'set PORT');
  await refuseTakenPort(config.mcpPort, 'MCP_PORT', 'set MCP_PORT');
  // With the API's Node options (lib/apiRuntime.ts), as `npm run start:api` sets them.
  const api = await startChild('api', { kind: 'api', env: childEnv });
  // The worker starts once the API listens, i.e. after the API has run the migrations, so its
  // activities never meet a schema that is still being created.
  const apiUp = await waitForPort(api, config.port, API_READY_TIMEOUT_MS);
  if (shuttingDown) return;
  if (!apiUp) say(`api is not listening on port ${config.port} after ${API_READY_TIMEOUT_MS / 1000} s; starting the worker anyway`);
  // With the worker's heap limit (WORKER_HEAP_MIB), as `npm run start:worker` sets it.
  await startChild('worker', { kind: 'worker', env: childEnv });
  const mcpUp = await waitForPort(api, config.mcpPort, 10_000);
  if (shuttingDown) return;

  const lines = [
    '',
    'Content Scheduling Service is running',
    `  API          ${config.publicUrl}${apiUp ? '' : '  (not answering yet)'}`,
    `  MCP          ${config.mcpPublicUrl}/mcp${mcpUp ? '' : '  (not answering yet)'}`,
    temporalUi ? `  Temporal UI  ${temporalUi}` : `  Temporal     ${services.temporal.address} (external)`,
    simUrl ? `  Network sim  ${simUrl}` : `  Network API  ${config.network.apiUrl}`,
    llmSimUrl
      ? `  LLM sim      ${llmSimUrl}`
      : `  LLM          ${services.llm ? services.llm.address : 'built-in writer (LLM_WRITER=builtin)'}`,
    transcriptionUrl ? `  Transcription sim ${transcriptionUrl}` : `  Transcription ${config.transcription.url}`,
    youtubeUrl ? `  YouTube sim  ${youtubeUrl}` : `  Transcripts  ${config.knowledge.youtubeTranscriptUrl}`,
    objectStoreServer
      ? `  Object store ${objectStoreServer.endpoint} (embedded, data in ${path.join(dataDir, 's3')})`
      : `  Object store ${config.s3.endpoint}`,
    '  Ctrl-C stops everything.',
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((err) => {
  if (shuttingDown) return;
  say(`internal error: ${err instanceof Error ? err.message : String(err)}`);
  void shutdown(1);
});
