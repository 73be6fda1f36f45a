import { config } from '../../config';
import { db } from '../../db';
import { defineJobKind } from '../kind';

// POST_GENERATION (spec 2.12, 3.2, 4.4): one draft written from a source text by the language
// model; workflows/generatePost.ts, activities/generation.ts, api/operations/generations/.

/** What the job row keeps of the request (the API's copy; the workflow reads it by job id). */
export interface GenerationJobInput {
  source: { type: 'text' | 'note' | 'idea' | 'source'; noteId?: string; ideaId?: string; sourceId?: string };
  sourceText: string;
  language: string;
  contentType: string;
  /** Validated and recorded, never acted on (spec 4.4: generation never schedules). */
  scheduledFor?: string;
}

export const postGeneration = defineJobKind<GenerationJobInput>()({
  type: 'POST_GENERATION',
  workflow: 'generatePostWorkflow',
  label: 'generation',
  // spec 4.4 and 8: about 5 cents.
  reserveCents: () => config.llm.reserveCents,
  describe: (job) => ({
    kind: 'generation',
    summary: `Generate a draft post for project ${job.project_id}`,
    details: `Job ${job.id} of workspace ${job.workspace_id}. QUEUED → RUNNING → DONE writes one draft (never scheduled); the job row in Postgres is the API's view.`,
  }),
});

let estimate: { value: number; at: number } | undefined;
let refreshing: Promise<number> | undefined;
const ESTIMATE_TTL_MS = 30_000;

/**
 * spec 2.12 estimatedCompletionMs: the median queue-to-done time of the latest 50 finished
 * generations service-wide, refreshed every 30 s per process; the configured default until
 * there is history. One refresh at a time: the requests that find the value stale while it is
 * read wait for that read rather than each sending their own (a burst sent one per request).
 */
export function estimateCompletionMs(): Promise<number> {
  if (estimate && Date.now() - estimate.at < ESTIMATE_TTL_MS) return Promise.resolve(estimate.value);
  refreshing ??= readEstimate().finally(() => (refreshing = undefined));
  return refreshing;
}

async function readEstimate(): Promise<number> {
  const r = await db().raw(
    `select percentile_cont(0.5) within group (order by ms) as p50, count(*)::int as n from (
       select extract(epoch from (completed_at - created_at)) * 1000 as ms from jobs
        where type = 'POST_GENERATION' and status = 'DONE' order by completed_at desc limit 50) recent`,
  );
  const { p50, n } = r.rows[0] as { p50: number | null; n: number };
  const value = n >= 5 && p50 !== null ? Math.max(1, Math.round(Number(p50))) : config.generation.estimatedCompletionMs;
  estimate = { value, at: Date.now() };
  return value;
}
