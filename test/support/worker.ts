import type { NativeConnection } from '@temporalio/worker';
import { config } from '../../lib/config';
import { ChatCompletionsWriter, type PostWriter } from '../../lib/llm/client';
import type { LlmStub } from '../../sim/llm/server';
import { createWorker, type ServiceWorker } from '../../workers/worker';

// One in-process Temporal worker a suite starts and stops, possibly several times (to change its
// activities, or to leave jobs QUEUED while it is down). Stopping drains the worker, then closes
// its connection, so no task of one test runs in the next.

export type TestActivities = Record<string, (...args: any[]) => Promise<unknown>>;

export interface TestWorker {
  start(activities?: TestActivities): Promise<void>;
  stop(): Promise<void>;
  readonly started: boolean;
}

/**
 * `writer`: the post writer the generation activities use (the configured one when omitted);
 * `taskQueue`: the queue it polls (the configured one when omitted).
 */
export function testWorker(opts: { writer?: PostWriter; taskQueue?: string } = {}): TestWorker {
  let current: { worker: ServiceWorker; connection: NativeConnection; running: Promise<void> } | null = null;
  return {
    async start(activities) {
      if (current) throw new Error('the test worker is already running');
      const { worker, connection } = await createWorker({ activities, ...opts });
      current = { worker, connection, running: worker.run() };
    },
    async stop() {
      if (!current) return;
      const c = current;
      current = null;
      c.worker.shutdown();
      await c.running;
      await c.connection.close();
    },
    get started() {
      return current !== null;
    },
  };
}

/** A test worker running through the current suite: started in its `before`, stopped in its `after`. */
export function useTestWorker(opts: Parameters<typeof testWorker>[0] = {}): TestWorker {
  const worker = testWorker(opts);
  before(() => worker.start());
  after(() => worker.stop());
  return worker;
}

/**
 * A post writer over the LLM stub (a real HTTP server): config is read at import and
 * LLM_BASE_URL names the run's shared simulator, so suites that script their own stub inject this.
 */
export function llmStubWriter(stub: LlmStub, timeoutMs: number): PostWriter {
  return new ChatCompletionsWriter({
    baseUrl: stub.url,
    model: 'stub-model',
    timeoutMs,
    priceInputPer1kTokens: config.llm.priceInputPer1kTokens,
    priceOutputPer1kTokens: config.llm.priceOutputPer1kTokens,
  });
}
