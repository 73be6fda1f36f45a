import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { workerNodeArgs } from '../../lib/config';
import { freePort } from '../../tooling/ports';
import { resolveTemporalBinary, startTemporalDevServer, type DevServer } from '../../tooling/temporalBinary';

// Real service processes for end-to-end tests that kill and restart them. Node runs the entry
// itself (tsx as a loader, not its CLI wrapper), so SIGKILL reaches the process that serves.
const root = path.resolve(import.meta.dirname, '..', '..');

export interface ServiceProcess {
  child: ChildProcess;
  output: string[];
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function spawnService(
  entry: string,
  env: Record<string, string>,
  readyPattern: RegExp,
  timeoutMs = 60_000,
  nodeArgs: string[] = [],
): Promise<ServiceProcess> {
  return spawnCommand(process.execPath, [...nodeArgs, '--import', 'tsx', entry], env, readyPattern, timeoutMs);
}

/**
 * Any command as a service (`npm start` as a user types it), ready when its output matches.
 * `group`: in a process group of its own, as a terminal runs a foreground job, so a test can
 * signal the whole group the way Ctrl-C does (`process.kill(-child.pid, 'SIGINT')`).
 */
export async function spawnCommand(
  command: string,
  args: string[],
  env: Record<string, string>,
  readyPattern: RegExp,
  timeoutMs = 60_000,
  opts: { group?: boolean } = {},
): Promise<ServiceProcess> {
  const entry = [command, ...args].join(' ');
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.group ?? false,
  });
  const output: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} not ready in ${timeoutMs} ms:\n${output.join('').slice(-2000)}`)), timeoutMs);
    const onData = (d: Buffer) => {
      output.push(d.toString());
      if (readyPattern.test(d.toString())) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => output.push(d.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with ${code}:\n${output.join('').slice(-2000)}`));
    });
  });
  child.removeAllListeners('exit');
  return {
    child,
    output,
    kill: (signal = 'SIGKILL') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
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
    this.api = await spawnService('api/main.ts', this.env(), /api listening/);
  }

  async startWorker(): Promise<void> {
    // Started as `npm run start:worker` starts it, heap limit included.
    this.worker = await spawnService('workers/main.ts', this.env(), /worker running/, 60_000, workerNodeArgs());
  }

  workerAlive(): boolean {
    return this.worker !== undefined && this.worker.child.exitCode === null && this.worker.child.signalCode === null;
  }

  async stop(): Promise<void> {
    await this.api?.kill('SIGTERM');
    await this.worker?.kill('SIGTERM');
    if (this.options.ownTemporal) await this.temporal?.stop();
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}
