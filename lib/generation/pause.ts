import type { Knex } from 'knex';

// Pausing job processing (docs/generation.md "Pausing job processing"): during an incident an
// operator stops new generation jobs from starting, without touching workers or Temporal. The
// switch is a row in Postgres, so it holds across every worker and survives restarts; the
// generation workflow's first activity reads it and, while it is on, fails with a retryable
// error, so the job stays QUEUED and Temporal retries the start under the activity's back-off
// (at most 30 s apart) until the switch is off again. Nothing in the workflow changes, so
// histories replay as before, and a cancel of a waiting job works as for any QUEUED job.

const KEY = 'jobs_paused';

export interface PauseState {
  paused: boolean;
  reason: string | null;
  since: string | null;
}

export const PAUSED_ERROR_TYPE = 'jobs_paused';

export async function jobProcessingState(db: Knex | Knex.Transaction): Promise<PauseState> {
  const row = await db('service_flags').where({ key: KEY }).first('value', 'updated_at');
  const v = (row?.value ?? {}) as { paused?: boolean; reason?: string | null };
  return { paused: v.paused === true, reason: v.reason ?? null, since: v.paused && row ? (row.updated_at as Date).toISOString() : null };
}

/**
 * The same switch as a condition of a statement, for a start that checks it in the UPDATE that
 * starts the job (one statement instead of two on every start: activities/generation.ts).
 */
export function notPausedSql(): { sql: string; bindings: string[] } {
  return { sql: `not exists (select 1 from service_flags where key = ? and value->'paused' = 'true'::jsonb)`, bindings: [KEY] };
}

export async function setJobProcessingPaused(db: Knex, paused: boolean, reason: string | null = null): Promise<PauseState> {
  await db('service_flags')
    .insert({ key: KEY, value: JSON.stringify({ paused, reason: paused ? reason : null }), updated_at: db.fn.now() })
    .onConflict('key')
    .merge();
  return jobProcessingState(db);
}
