import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createActivities } from '../activities';
import { config } from '../lib/config';
import { db } from '../lib/db';
import type { PostWriter } from '../lib/llm/client';
import { createNetworkClient } from '../lib/network/client';
import { searchAttributeIndexedTypes } from '../lib/searchAttributes';
import { temporalAddress, temporalClient } from '../lib/temporal';

// Builds the worker for the one task queue. The workflow bundle is built once per process
// (webpack takes seconds) and reused by every worker created after.

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} } as never });
  return bundle;
}

/** Registers the search attributes on servers that do not have them (a dev server started elsewhere, a fresh cluster). */
export async function ensureSearchAttributes(connection: NativeConnection | { operatorService: NativeConnection['operatorService'] }): Promise<void> {
  const wanted = searchAttributeIndexedTypes();
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace: config.temporalNamespace });
    const missing = Object.fromEntries(Object.entries(wanted).filter(([name]) => !(name in (existing.customAttributes ?? {}))));
    if (Object.keys(missing).length) await connection.operatorService.addSearchAttributes({ namespace: config.temporalNamespace, searchAttributes: missing });
  } catch (err) {
    console.warn(`could not verify Temporal search attributes: ${(err as Error).message}`);
  }
}

let runtimeInstalled = false;
export function installRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = ({ debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' } as const)[config.logLevel as 'info'] ?? 'INFO';
  Runtime.install({ logger: new DefaultLogger(level) });
}

/** `activities` replaces activities by name: tests inject factories built with their own options. `writer` is the generation jobs' post writer (tests point one at the LLM stub). */
export async function createWorker(opts: { taskQueue?: string; connection?: NativeConnection; activities?: Record<string, (...args: any[]) => Promise<unknown>>; writer?: PostWriter } = {}) {
  installRuntime();
  const connection = opts.connection ?? (await NativeConnection.connect({ address: temporalAddress() }));
  await ensureSearchAttributes(connection);
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: opts.taskQueue ?? config.temporalTaskQueue,
    workflowBundle: await workflowBundle(),
    activities: { ...createActivities({ db: db(), network: createNetworkClient(), temporal: temporalClient, writer: opts.writer }), ...opts.activities },
    maxConcurrentActivityTaskExecutions: config.worker.activityConcurrency,
    maxConcurrentWorkflowTaskExecutions: config.worker.workflowConcurrency,
    shutdownGraceTime: '10 seconds',
  });
  return { worker, connection };
}
