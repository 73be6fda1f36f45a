import type { Knex } from 'knex';
import { log } from '../logger';

// The hourly rollup's backfill (docs/analytics.md "Deploying the rollup"): migration
// 20261203120000 creates post_publish_hours and the triggers that keep it without counting the
// posts already there; the reconciler counts them afterwards in steps
// (post_publish_hours_backfill_step, in the same migration), online: a writer is held back at
// most one step. Until the backfill is done the overviews read their periods from the posts.

const ROLLUP = 'post_publish_hours';

let ready = false;
let checkedAt = 0;
/** While the backfill runs, a process looks at its state at most this often. */
const RECHECK_MS = 5_000;

/** Whether the rollup counts every post, so the overview may read it. Once true, for good. */
export async function rollupReady(k: Knex): Promise<boolean> {
  if (ready || Date.now() - checkedAt < RECHECK_MS) return ready;
  const row = await k('rollup_backfills').where({ name: ROLLUP }).first('done_at');
  checkedAt = Date.now();
  ready = Boolean(row?.done_at);
  return ready;
}

/** Forgets what rollupReady saw (a test that takes the rollup back to its start). */
export function clearRollupReadyCache(): void {
  ready = false;
  checkedAt = 0;
}

export interface BackfillProgress {
  /** Posts read by this call's steps. */
  counted: number;
  /** Steps that gave way to a writer (the lock or a metrics row held past the step's lock timeout). */
  deferred: number;
  done: boolean;
}

/**
 * Runs backfill steps of `batch` posts until the rollup is done or `budgetMs` is spent. A step
 * that gives way to a writer is tried again after `pauseMs`; each step is its own transaction, so
 * what is counted stays counted whatever happens to the process.
 */
export async function advanceRollupBackfill(
  k: Knex,
  { batch = 1_000, budgetMs = 20_000, pauseMs = 50 }: { batch?: number; budgetMs?: number; pauseMs?: number } = {},
): Promise<BackfillProgress> {
  const progress: BackfillProgress = { counted: 0, deferred: 0, done: false };
  if (await rollupReady(k)) return { ...progress, done: true };
  const until = Date.now() + budgetMs;
  while (Date.now() < until) {
    let read: number | null;
    try {
      read = (await k.raw('select post_publish_hours_backfill_step(?) as read', [batch])).rows[0].read;
    } catch (err) {
      if ((err as { code?: string }).code !== '55P03') throw err; // lock_not_available: a writer in the way
      progress.deferred++;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      continue;
    }
    if (read !== null) progress.counted += read;
    if (read === null || read < batch) {
      progress.done = true;
      break;
    }
  }
  if (progress.counted || progress.deferred) log.info('rollup backfill', { rollup: ROLLUP, ...progress });
  return progress;
}
