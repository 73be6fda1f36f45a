import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { launch, type Launched, type LaunchOptions } from '../../tooling/launcher';
import { freePort } from '../../tooling/ports';
import { resolveTemporalBinary, startTemporalDevServer, type DevServer } from '../../tooling/temporalBinary';

// Real service processes for end-to-end tests that kill and restart them, through the one
// launcher (tooling/launcher.ts): Node runs the entry itself, so SIGKILL reaches the process
// that serves, and every line it printed is kept for the test's failure messages.

export type ServiceProcess = Launched;

/** `launch` as the tests use it: output kept, logged at info (readiness lines are info lines). */
export function launchService(options: LaunchOptions): Promise<Launched> {
  return launch({ readyTimeoutMs: 60_000, keepOutput: true, ...options, env: { LOG_LEVEL: 'info', ...options.env } });
}

/**
 * An API and a worker of a test's own (end-to-end tests that kill and restart them), on the
 * suite's Temporal server or, with `ownTemporal`, on a file-backed dev server of their own that
 * can be killed and restarted on the same port and file.
 */
export class IsolatedStack {
  /** Only with `ownTemporal`. */
  temporal!: DevServer;
  api: ServiceProcess | undefined;
  worker: ServiceProcess | undefined;
  apiPort = 0;
  private mcpPort = 0;
  private temporalPort = 0;
  private dir = '';
  private binary = '';

  constructor(
    private readonly name: string,
    private readonly options: { ownTemporal?: boolean; env?: Record<string, string> } = {},
  ) {}

  get apiUrl(): string {
    return `http://127.0.0.1:${this.apiPort}`;
  }

  env(): Record<string, string> {
    return {
      ...(this.options.ownTemporal ? { TEMPORAL_ADDRESS: `127.0.0.1:${this.temporalPort}` } : {}),
      PORT: String(this.apiPort),
      MCP_PORT: String(this.mcpPort),
      TEMPORAL_TASK_QUEUE: this.name,
      RECONCILE_INTERVAL_SECONDS: '2',
      ...this.options.env,
    };
  }

  async start(): Promise<void> {
    this.apiPort = await freePort();
    do this.mcpPort = await freePort();
    while (this.mcpPort === this.apiPort);
    if (this.options.ownTemporal) {
      this.dir = await mkdtemp(path.join(os.tmpdir(), `${this.name}-`));
      this.binary = await resolveTemporalBinary();
      do this.temporalPort = await freePort();
      while (this.temporalPort === this.apiPort || this.temporalPort === this.mcpPort);
      await this.startTemporal();
    }
    await Promise.all([this.startApi(), this.startWorker()]);
  }

  async startTemporal(): Promise<void> {
    this.temporal = await startTemporalDevServer({
      binary: this.binary,
      port: this.temporalPort,
      uiPort: null,
      dbFile: path.join(this.dir, 'temporal.db'),
      log: () => {},
    });
  }

  async startApi(): Promise<void> {
    this.api = await launchService({ kind: 'api', env: this.env(), ready: { line: /api listening/ } });
  }

  async startWorker(): Promise<void> {
    // Started as `npm run start:worker` starts it, heap limit included.
    this.worker = await launchService({ kind: 'worker', env: this.env(), ready: { line: /worker running/ } });
  }

  workerAlive(): boolean {
    return this.worker?.running() ?? false;
  }

  async stop(): Promise<void> {
    await this.api?.stop();
    await this.worker?.stop();
    if (this.options.ownTemporal) await this.temporal?.stop();
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}
