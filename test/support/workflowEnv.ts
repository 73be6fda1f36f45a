import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkerOptions } from '@temporalio/worker';
import { randomBase62 } from '../../lib/ids';
import { SEARCH_ATTRIBUTE_KEYS } from '../../lib/searchAttributes';
import { resolveTemporalBinary } from '../../tooling/temporalBinary';
import { installRuntime, workflowBundle } from '../../workers/worker';

// The workflow tier (test/workflows): the real workflow bundle on a worker of its own task queue
// per test, with stubbed activities, asserting through the workflows' own queries.
//
// The environment is TestWorkflowEnvironment.createLocal() on the project's `temporal` CLI
// (existing-path), not createTimeSkipping(): the time-skipping test server ships only as a
// download from the Java SDK's releases, which these machines cannot reach (only the npm
// registry and the Go module proxy are). So timers are real and the scenarios keep them to
// seconds; waits are on queries and results, never fixed sleeps. One server for the whole run,
// started on first use and stopped after the suite (rootHooks.ts).

let shared: Promise<TestWorkflowEnvironment> | undefined;

export function workflowEnv(): Promise<TestWorkflowEnvironment> {
  shared ??= (async () => {
    installRuntime();
    const path = await resolveTemporalBinary({ log: () => {} });
    return TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path },
        searchAttributes: [...SEARCH_ATTRIBUTE_KEYS],
        extraArgs: ['--log-level', 'error'],
      },
    });
  })();
  return shared;
}

export async function closeWorkflowEnv(): Promise<void> {
  const env = await shared?.catch(() => undefined);
  shared = undefined;
  await env?.teardown();
}

export interface WorkflowTestContext {
  env: TestWorkflowEnvironment;
  client: TestWorkflowEnvironment['client'];
  taskQueue: string;
}

/**
 * Runs `fn` while a worker polls a fresh task queue with `activities` (stubs by activity name);
 * the worker stops when `fn` settles, so no test sees another's workflows or activities.
 */
export async function withWorker<T>(
  activities: Record<string, (...args: any[]) => Promise<unknown>>,
  fn: (ctx: WorkflowTestContext) => Promise<T>,
  options: Partial<Pick<WorkerOptions, 'maxHeartbeatThrottleInterval' | 'defaultHeartbeatThrottleInterval'>> = {},
): Promise<T> {
  const env = await workflowEnv();
  const taskQueue = `workflow-test-${randomBase62(10)}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
    ...options,
  });
  return worker.runUntil(fn({ env, client: env.client, taskQueue }));
}

/** A promise with its resolve function, for stubs that hold an activity until the test lets go. */
export function gate<T = void>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
