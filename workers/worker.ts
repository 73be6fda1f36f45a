import { existsSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type WorkflowBundleOption,
  type WorkflowBundleWithSourceMap,
  type WorkerOptions,
} from '@temporalio/worker';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/worker/index.js';
import { createActivities } from '../activities';
import { config } from '../lib/config';
import { db } from '../lib/db';
import type { PostWriter } from '../lib/llm/client';
import { createNetworkClient } from '../lib/network/client';
import { tracingActive, tracingPipeline } from '../lib/telemetry';
import { clientInterceptors, registerSearchAttributes, temporalAddress, temporalClient } from '../lib/temporal/client';
import { jobsQueue } from '../lib/temporal/contracts/queues';

// Builds the worker for the one task queue. The workflow bundle is built once per process
// (webpack takes seconds) and reused by every worker created after.

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
/** Where `npm run build` writes the workflow bundle (tooling/bundle-workflows.ts). */
export const PREBUILT_BUNDLE_PATH = fileURLToPath(new URL('../dist/workflow-bundle.js', import.meta.url));
/** The same workflows with the OpenTelemetry workflow interceptors, for workers that trace. */
export const PREBUILT_TRACED_BUNDLE_PATH = fileURLToPath(new URL('../dist/workflow-bundle-traced.js', import.meta.url));
/**
 * The Temporal OpenTelemetry workflow interceptors (a span per workflow run, signal and activity
 * start, continuing the trace the starter's headers carry). They run inside the workflow
 * sandbox, so they are bundled with the workflows: only into the traced bundle, so a worker
 * without tracing runs no interceptor at all.
 */
export const WORKFLOW_TRACING_INTERCEPTORS = createRequire(import.meta.url).resolve(
  '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
);

/**
 * The pre-built bundle a worker loads, or null to bundle the source at start. Production
 * workers load the build's bundle (as the Temporal samples' production worker does), so a
 * worker starts in a second and runs exactly the code that was built and checked. Anywhere else
 * the source is bundled at start, so a bundle left over from an older build can never run old
 * workflow code in development or tests; WORKFLOW_BUNDLE_PATH names a bundle explicitly.
 */
export function prebuiltBundlePath(
  opts: { env: string; explicit: string | undefined; builtPath: string } = {
    env: config.env,
    explicit: config.worker.workflowBundlePath,
    builtPath: tracingActive() ? PREBUILT_TRACED_BUNDLE_PATH : PREBUILT_BUNDLE_PATH,
  },
): string | null {
  if (opts.explicit) {
    const abs = path.resolve(opts.explicit);
    if (!existsSync(abs)) throw new Error(`WORKFLOW_BUNDLE_PATH ${abs} does not exist; run \`npm run build\``);
    return abs;
  }
  if (opts.env === 'production' && existsSync(opts.builtPath)) return opts.builtPath;
  return null;
}

/** The worker's bundle option: the pre-built file when there is one, else the source bundled now. */
export async function workerBundle(): Promise<WorkflowBundleOption> {
  const codePath = prebuiltBundlePath();
  return codePath ? { codePath } : workflowBundle({ traced: tracingActive() });
}

const bundles = new Map<boolean, Promise<WorkflowBundleWithSourceMap>>();
/**
 * The workflow source bundled in this process (the build, replay tests and development use it);
 * `traced` adds the OpenTelemetry workflow interceptors (WORKFLOW_TRACING_INTERCEPTORS).
 */
export function workflowBundle(opts: { traced?: boolean } = {}): Promise<WorkflowBundleWithSourceMap> {
  const traced = opts.traced ?? false;
  let bundle = bundles.get(traced);
  if (!bundle) {
    bundle = bundleWorkflows(WORKFLOWS_PATH, { traced });
    bundles.set(traced, bundle);
  }
  return bundle;
}

/**
 * Bundles the workflows exported by `workflowsPath` now, uncached: workflowBundle above for the
 * real source, tooling/workflowVariant.ts for an edited copy of it.
 */
export function bundleWorkflows(workflowsPath: string, opts: { traced?: boolean } = {}): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: opts.traced ? [WORKFLOW_TRACING_INTERCEPTORS] : [],
    logger: { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} } as never,
  });
}

/**
 * With tracing on (lib/telemetry.ts): the activity interceptors (a span per activity run, a
 * child of the workflow's StartActivity span), the client interceptor for the worker's own
 * client calls, and the sink through which the workflow sandbox hands its spans to this
 * process's span processor.
 */
function tracingOptions(): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  const pipeline = tracingPipeline();
  if (!pipeline) return {};
  return {
    interceptors: {
      client: clientInterceptors(),
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(pipeline.spanProcessor, pipeline.resource) },
  };
}

let runtimeInstalled = false;
export function installRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = ({ debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' } as const)[config.logLevel as 'info'] ?? 'INFO';
  // The SDK's own worker metrics (task slots, poll latency, workflow and activity execution),
  // served by the SDK core's Prometheus exporter when TEMPORAL_SDK_METRICS_PORT is set
  // (docs/operations.md); off by default so concurrent test workers never contend for a port.
  const sdkPort = config.temporalSdkMetricsPort;
  Runtime.install({
    logger: new DefaultLogger(level),
    ...(sdkPort !== undefined ? { telemetryOptions: { metrics: { prometheus: { bindAddress: `0.0.0.0:${sdkPort}` } } } } : {}),
  });
}

/**
 * The slots, pollers and sticky cache of a worker (docs/configuration.md, docs/publishing.md
 * "Capacity"). The cache is bounded: the SDK's default sizes it from the heap (≈ 2,300 workflows,
 * about 1 MiB each, for a 4 GiB heap), so a worker holding thousands of waiting publish workflows
 * grew past a gigabyte; a workflow evicted from the cache replays its short history when its
 * timer fires. The publishing bench's baseline worker uses the same settings.
 */
export function workerTuning() {
  return {
    maxConcurrentActivityTaskExecutions: config.worker.activityConcurrency,
    maxConcurrentWorkflowTaskExecutions: config.worker.workflowConcurrency,
    maxConcurrentLocalActivityExecutions: config.worker.localActivityConcurrency,
    maxCachedWorkflows: config.worker.maxCachedWorkflows,
    workflowTaskPollerBehavior: {
      type: 'simple-maximum' as const,
      maximum: Math.max(2, Math.min(config.worker.workflowTaskPollers, config.worker.workflowConcurrency)),
    },
    activityTaskPollerBehavior: {
      type: 'simple-maximum' as const,
      maximum: Math.max(1, Math.min(config.worker.activityTaskPollers, config.worker.activityConcurrency)),
    },
  };
}

/**
 * The worker of a process: the deployment's queue and the jobs queue beside it
 * (lib/temporal/contracts/queues.ts), each a Worker of the same workflows and activities, the
 * jobs one with WORKER_JOB_CONCURRENCY slots. They run, stop and fail together.
 */
export class ServiceWorker {
  constructor(
    readonly main: Worker,
    readonly jobs: Worker,
  ) {}

  /** Until both have stopped; a failure of either stops the other and is thrown. */
  async run(): Promise<void> {
    const runs = [this.main.run(), this.jobs.run()];
    try {
      await Promise.all(runs);
    } catch (err) {
      this.shutdown();
      await Promise.allSettled(runs);
      throw err;
    }
  }

  /** Both drain and stop (a worker already stopping is left to it). */
  shutdown(): void {
    for (const w of [this.main, this.jobs]) if (w.getState() === 'RUNNING') w.shutdown();
  }

  /** Runs until `until` settles, then stops, as Worker.runUntil. */
  async runUntil<R>(until: Promise<R> | (() => Promise<R>)): Promise<R> {
    const running = this.run();
    try {
      return await (typeof until === 'function' ? until() : until);
    } finally {
      this.shutdown();
      await running;
    }
  }
}

/** The jobs queue's slots: few, so its backlog waits in matching, where fairness orders it. */
export function jobsTuning() {
  const n = config.worker.jobConcurrency;
  return {
    maxConcurrentActivityTaskExecutions: n,
    maxConcurrentWorkflowTaskExecutions: Math.max(2, n),
    maxConcurrentLocalActivityExecutions: n,
    maxCachedWorkflows: config.worker.maxCachedWorkflows,
    workflowTaskPollerBehavior: { type: 'simple-maximum' as const, maximum: Math.max(2, Math.min(config.worker.workflowTaskPollers, n)) },
    activityTaskPollerBehavior: { type: 'simple-maximum' as const, maximum: Math.max(1, Math.min(config.worker.activityTaskPollers, n)) },
  };
}

/** `activities` replaces activities by name: tests inject factories built with their own options. `writer` is the generation jobs' post writer (tests point one at the LLM stub). */
export async function createWorker(
  opts: {
    taskQueue?: string;
    connection?: NativeConnection;
    activities?: Record<string, (...args: any[]) => Promise<unknown>>;
    writer?: PostWriter;
  } = {},
): Promise<{ worker: ServiceWorker; connection: NativeConnection }> {
  installRuntime();
  const connection = opts.connection ?? (await NativeConnection.connect({ address: temporalAddress() }));
  // Registers what a fresh server lacks; a refusal stops the worker with the names and the fix.
  await registerSearchAttributes(connection);
  const taskQueue = opts.taskQueue ?? config.temporalTaskQueue;
  const common = {
    connection,
    namespace: config.temporalNamespace,
    workflowBundle: await workerBundle(),
    activities: {
      ...createActivities({ db: db(), network: createNetworkClient(), temporal: temporalClient, writer: opts.writer }),
      ...opts.activities,
    },
    shutdownGraceTime: '10 seconds' as const,
    ...tracingOptions(),
  };
  const main = await Worker.create({ ...common, taskQueue, ...workerTuning() });
  const jobs = await Worker.create({ ...common, taskQueue: jobsQueue(taskQueue), ...jobsTuning() });
  return { worker: new ServiceWorker(main, jobs), connection };
}
