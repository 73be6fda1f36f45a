import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, portAcceptsConnections } from '../../tooling/ports';
import { launchService, type ServiceProcess } from '../support/processes';
import { waitFor } from '../support/wait';
import { ok as adminOk } from '../support/admin';

// issue 17: `npm start` (bin/start.ts) stops cleanly. After SIGINT the API, the MCP transport,
// the metrics listeners (API, worker, Temporal SDK), the worker, the network simulator and the embedded Temporal dev
// server (frontend and UI) are all gone: no port stays held.

/** The ports every `npm start` opens: both doors, Temporal and its UI, the simulator, two metrics listeners. */
const OWN_PORTS = [
  'PORT',
  'MCP_PORT',
  'TEMPORAL_PORT',
  'TEMPORAL_UI_PORT',
  'NETWORK_SIMULATOR_PORT',
  'METRICS_PORT',
  'WORKER_METRICS_PORT',
];

/** Everything the process printed, one line each. */
const printed = (service: ServiceProcess) => service.output.map((l) => `${l}\n`).join('');

/**
 * A free port for each of `names` and the environment of an `npm start` of its own in `dataDir`:
 * its own Temporal and network simulator (not the test run's), plus `env`.
 */
async function ownStart(names: string[], dataDir: string, env: Record<string, string>) {
  const ports: Record<string, number> = {};
  // Each port free when asked, and none given twice: the kernel may hand a port it just freed to the next ask.
  for (const n of names) {
    let port = await freePort();
    while (Object.values(ports).includes(port)) port = await freePort();
    ports[n] = port;
  }
  return {
    ports,
    env: {
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      PUBLIC_URL: `http://127.0.0.1:${ports.PORT}`,
      DATA_DIR: dataDir,
      TEMPORAL_ADDRESS: '',
      NETWORK_API_URL: '',
      ...env,
    },
  };
}

describe('npm start stops cleanly on SIGINT', function () {
  this.timeout(240_000);
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'start-test-'));
  });
  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('frees every port it opened', async () => {
    const names = [...OWN_PORTS, 'TEMPORAL_SDK_METRICS_PORT'];
    // A queue no test worker polls.
    const { ports, env } = await ownStart(names, dataDir, { TEMPORAL_TASK_QUEUE: `start-test-${process.pid}` });
    const service = await launchService({
      entry: 'bin/start.ts',
      env,
      ready: { line: /Content Scheduling Service is running/ },
      readyTimeoutMs: 180_000,
    });
    try {
      const ready = await fetch(`http://127.0.0.1:${ports.PORT}/v1/health/ready`);
      assert.equal(ready.status, 200, await ready.text());
      // The worker opens its metrics port once its workflow bundle is built, after the banner.
      for (const n of names) await waitFor(() => portAcceptsConnections(ports[n]!), 120_000, `${n} ${ports[n]} to open`);
      const metrics = await fetch(`http://127.0.0.1:${ports.METRICS_PORT}/metrics`);
      assert.match(await metrics.text(), /http_requests_total/);
      // The worker's own metrics, and the Temporal SDK's (its runtime's Prometheus exporter).
      const worker = await (await fetch(`http://127.0.0.1:${ports.WORKER_METRICS_PORT}/metrics`)).text();
      assert.match(worker, /db_pool_connections\{state="max"\}/);
      assert.match(worker, /# TYPE publish_attempts_total counter/);
      const sdk = await waitFor(
        async () => {
          const text = await (await fetch(`http://127.0.0.1:${ports.TEMPORAL_SDK_METRICS_PORT}/metrics`)).text();
          return /temporal_/.test(text) && text;
        },
        60_000,
        'Temporal SDK metrics',
      );
      assert.match(sdk, /temporal_worker_task_slots_available|temporal_num_pollers|temporal_request/);
    } finally {
      const exited = service.kill('SIGINT').then((e) => e.code);
      const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 60_000))]);
      if (code === 'timeout') await service.kill('SIGKILL');
      assert.equal(code, 0, printed(service).slice(-3000));
    }
    for (const n of names) assert.equal(await portAcceptsConnections(ports[n]!), false, `${n} ${ports[n]} is released after SIGINT`);
  });

  it('stops every child through its clean path when Ctrl-C reaches the process group of `npm start`', async () => {
    // issue 29 item 6b: a terminal signals the whole foreground group, so npm and the start
    // script both get SIGINT and npm forwards its copy; the echo must not count as a second press.
    const names = [...OWN_PORTS, 'LLM_STUB_PORT', 'TRANSCRIPTION_SIMULATOR_PORT', 'YOUTUBE_SIMULATOR_PORT', 'S3_SERVER_PORT'];
    const { ports, env } = await ownStart(names, dataDir, {
      // Every simulator its own too, and a queue no test worker polls.
      LLM_BASE_URL: '',
      TRANSCRIPTION_URL: '',
      YOUTUBE_TRANSCRIPT_URL: '',
      S3_ENDPOINT: '',
      TEMPORAL_TASK_QUEUE: `start-group-test-${process.pid}`,
    });
    const service = await launchService({
      command: ['npm', 'start'],
      env,
      ready: { line: /Content Scheduling Service is running/ },
      readyTimeoutMs: 180_000,
      group: true,
    });
    const group = -service.child.pid!;
    let ended: { code: number | null; signal: NodeJS.Signals | null } | 'timeout' = 'timeout';
    try {
      // issue 29 item 5: a plain npm start runs the LLM simulator, and bin/admin finds it on the same port.
      assert.match(printed(service), new RegExp(`LLM sim +http://127\\.0\\.0\\.1:${ports.LLM_STUB_PORT}/v1`));
      assert.equal((await adminOk(['llm', 'latency', '--ms', '0'], { env: { ...env, ADMIN_CLI_BUNDLE: '0' } })).latencyMs, 0);
      // The worker is up (its metrics port opens once its workflow bundle is built), so it too stops through its own path.
      await waitFor(() => portAcceptsConnections(ports.WORKER_METRICS_PORT!), 120_000, 'the worker to start');
    } finally {
      const exited = service.exited;
      process.kill(group, 'SIGINT');
      // The echo: the copy a wrapper forwards (npm, the tsx CLI's relay) arrives moments later.
      await sleep(50);
      process.kill(group, 'SIGINT');
      ended = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 90_000))]);
      if (ended === 'timeout') process.kill(group, 'SIGKILL');
    }
    const output = printed(service);
    assert.doesNotMatch(output, /second interrupt/, output.slice(-3000));
    for (const child of ['api', 'worker', 'network-sim', 'llm-sim', 'transcription-sim', 'youtube-sim'])
      assert.match(output, new RegExp(`\\[start\\] ${child} stopped\\n`), `${child} stopped cleanly (exit 0):\n${output.slice(-3000)}`);
    assert.match(output, /\[start\] object store stopped/);
    assert.match(output, /\[start\] temporal stopped/);
    // The start script exits 0; npm, interrupted itself, then ends by SIGINT (a shell's 130) once it has.
    if (ended === 'timeout') assert.fail(`npm start did not stop within 90 s:\n${output.slice(-3000)}`);
    assert.ok(ended.code === 0 || ended.signal === 'SIGINT', `npm ended with ${JSON.stringify(ended)}:\n${output.slice(-3000)}`);
    for (const n of names) assert.equal(await portAcceptsConnections(ports[n]!), false, `${n} ${ports[n]} is released after Ctrl-C`);
  });
});
