import { setTimeout as sleep } from 'node:timers/promises';
import { db } from '../../lib/db';
import { TERMINAL_STATUSES, type JobStatus } from '../../lib/jobs/row';
import { temporalClient } from '../../lib/temporal/client';
import { recordHistory } from '../../tooling/record-history';
import { startLlmStub, type LlmStub } from '../../sim/llm/server';
import { llmStubWriter, testWorker } from '../support/worker';
import { startApi, type TestServer } from '../support/app';

// The generation suites' harness: the real API over HTTP, the LLM stub as a real HTTP server,
// and an in-process worker whose writer is a ChatCompletionsWriter pointed at the stub (config
// is read at import and LLM_BASE_URL names the run's shared simulator, so the writer is injected).

export interface Harness {
  api: TestServer;
  stub: LlmStub;
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  close(): Promise<void>;
}

export async function startHarness(opts: { worker?: boolean } = {}): Promise<Harness> {
  const api = await startApi();
  const stub = await startLlmStub();
  const worker = testWorker({ writer: llmStubWriter(stub, 10_000) });
  const harness: Harness = {
    api,
    stub,
    async startWorker() {
      if (!worker.started) await worker.start();
    },
    stopWorker: () => worker.stop(),
    async close() {
      await harness.stopWorker();
      await stub.close();
      await api.close();
    },
  };
  if (opts.worker !== false) await harness.startWorker();
  return harness;
}

/** The harness of the enclosing `describe`: started in its `before`, its stub reset after each test, closed in its `after`. */
export function useHarness(opts: { worker?: boolean } = {}): Harness {
  const h = {} as Harness;
  before(async () => {
    Object.assign(h, await startHarness(opts));
  });
  afterEach(() => h.stub.reset());
  after(async () => {
    await h.close();
  });
  return h;
}

/** Polls the job row (not the API: the read bucket allows 120 calls a minute) until `done` holds. */
export async function waitForJob(
  jobId: string,
  done: (status: JobStatus) => boolean = (s) => TERMINAL_STATUSES.includes(s),
  timeoutMs = 30_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await db()('jobs').where({ id: jobId }).first();
    if (row && done(row.status)) return row;
    if (Date.now() > deadline) throw new Error(`job ${jobId} is still ${row?.status} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Waits until the job's workflow has closed in Temporal and returns its status name. */
export async function workflowClosed(jobId: string, timeoutMs = 30_000): Promise<string> {
  const client = await temporalClient();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = await client.workflow.getHandle(jobId).describe();
    if (d.status.name !== 'RUNNING') return d.status.name;
    if (Date.now() > deadline) throw new Error(`workflow ${jobId} still running after ${timeoutMs} ms`);
    await sleep(100);
  }
}

export async function draftsOf(
  jobId: string,
): Promise<Array<{ id: string; status: string; scheduled_at: Date | null; content: string; content_type: string; title: string }>> {
  return db()('posts').where({ generation_job_id: jobId }).select('id', 'status', 'scheduled_at', 'content', 'content_type', 'title');
}

/**
 * `RECORD_HISTORIES=1 npm test -- test/generation` saves the histories of the scenarios that
 * call this into test/replay/histories/generatePost-<scenario>.json (named by scenario, like the
 * publishing histories beside them), which the replay suite replays in CI. Record new ones
 * when the workflow changes (behind patched()); never re-record old ones to make replay pass.
 */
export async function recordIfAsked(jobId: string, scenario: string): Promise<void> {
  if (process.env.RECORD_HISTORIES !== '1') return;
  await workflowClosed(jobId);
  await recordHistory(jobId, `generatePost-${scenario}`);
}

export function generationBody(projectId: string, extra: Record<string, unknown> = {}) {
  return {
    projectId,
    source: {
      type: 'text',
      text: 'We moved our release checklist into the pipeline this quarter. Every deploy now runs the same twelve checks, and rollbacks dropped by half. The lesson: write the checklist down, then make the machine run it.',
    },
    ...extra,
  };
}
