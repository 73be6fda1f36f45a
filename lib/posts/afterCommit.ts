import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { afterCommit, db } from '../db';
import { hasScheduleColumns } from '../publishing/schedule';
import { log } from '../logger';
import { temporalClient } from '../temporal/client';
import { syncPublishWorkflow } from '../temporal/start/publishPost';
import { signalReviewDecided, startReviewWorkflow } from '../temporal/start/reviewPost';
import { inWorkspaceTurns, readThroughIndexes } from '../workspaceTurns';
import type { PostRow } from './row';
import type { Committed } from './write';

// After a post change commits (./write.ts), the workflows that wait on the post hear of it: the
// publish workflow of a moved schedule (docs/publishing.md), the workflow of a review round
// opened or decided (docs/review.md). Every door and every worker that changes a post calls
// `afterPostCommitted`; the reconciler calls the same `syncPostSchedule` / `startPostReview`.
// The change is durable before any of this, so a Temporal outage only delays it: the rows
// record what each workflow already knows (`workflow_synced_version`, `review_synced_round`),
// and the reconciler delivers the rest. A schedule change a sleeping publish workflow will find
// on its own is not signalled at all: `commitChange` (./write.ts) counts it as known in its own
// UPDATE (lib/publishing/schedule.ts wakesWorkflow).

type ScheduledPost = Parameters<typeof syncPublishWorkflow>[1];

/**
 * Records that the post's publish workflow knows `schedule_version`, after a signal:
 * `posts.workflow_synced_version` only moves forward (its other writer is `commitChange`, for a
 * change left for a sleeping workflow to find). The publish step calls it in its own transaction
 * when it takes the post off the schedule itself (it is the workflow).
 */
export async function markScheduleSynced(q: Knex | Knex.Transaction, post: Pick<PostRow, 'id' | 'schedule_version'>): Promise<void> {
  await q('posts')
    .where({ id: post.id })
    .andWhere('workflow_synced_version', '<', post.schedule_version)
    .update({ workflow_synced_version: post.schedule_version });
}

/**
 * Signal-with-start of the post's publish workflow, then the version it now knows. The snapshot
 * carries the project's timezone for the times the workflow shows (docs/operations.md "What
 * the workflows show"). A post write's reload joins it (./write.ts), as the reconciler's read
 * does; a row read without it costs one lookup by primary key.
 */
export async function syncPostSchedule(client: Client, q: Knex, post: ScheduledPost): Promise<void> {
  if (post.project_id && post.timezone === undefined && hasScheduleColumns(post)) {
    const project = await q('projects').where({ id: post.project_id }).first('timezone');
    post = { ...post, timezone: project?.timezone ?? null };
  }
  await syncPublishWorkflow(client, post);
  await markScheduleSynced(q, post);
}

/**
 * The reconciler's share of schedule changes whose signal was lost: posts whose version is past
 * the one their workflow knows, at most `limit`, in turns by workspace (lib/workspaceTurns.ts),
 * soonest due first within a turn, so one workspace's thousands of missed signals (Temporal
 * down through its bulk reschedule) do not hold another's post back for passes on end.
 */
export async function unsyncedSchedules(q: Knex, limit: number): Promise<ScheduledPost[]> {
  return q.transaction(async (trx): Promise<ScheduledPost[]> => {
    await readThroughIndexes(trx);
    return await inWorkspaceTurns(
      trx,
      trx('posts')
        .whereRaw('workflow_synced_version < schedule_version')
        .select('id', 'workspace_id', 'project_id', 'schedule_version', 'status', 'scheduled_at', 'deleted_at')
        // The zone the workflow shows its times in (docs/operations.md "What the workflows show").
        .select(trx.raw('(select projects.timezone from projects where projects.id = posts.project_id) as timezone')),
      'scheduled_at',
      limit,
    ).select('id', 'workspace_id', 'project_id', 'schedule_version', 'status', 'scheduled_at', 'deleted_at', 'timezone');
  });
}

/** The reconciler's share of review rounds whose start was lost (docs/review.md), in turns by workspace as above. */
export async function unstartedReviews(q: Knex, limit: number): Promise<PostRow[]> {
  const ids = inWorkspaceTurns(
    q,
    q('posts')
      .whereRaw('review_synced_round < review_round')
      .whereRaw(`review->>'state' = 'pending'`)
      .whereNull('deleted_at')
      .select('id', 'workspace_id', 'updated_at'),
    'updated_at',
    limit,
  ).select('id');
  return (await q('posts').whereIn('id', ids)) as PostRow[];
}

/** Starts the round's workflow (a second start of a round is a no-op), then records the round as started. */
export async function startPostReview(client: Client, q: Knex, post: PostRow): Promise<void> {
  await startReviewWorkflow(client, post);
  const round = post.review_round ?? 0;
  await q('posts').where({ id: post.id }).andWhere('review_synced_round', '<', round).update({ review_synced_round: round });
}

async function bestEffort(failure: string, postId: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    log.warn(failure, { postId, err });
  }
}

/**
 * Tells the post's workflows what a committed change did to them (see above); never throws.
 * Inside a unit of work (an idempotent request, lib/db.ts) it runs once the unit has committed.
 */
export function afterPostCommitted(c: Pick<Committed, 'post' | 'scheduleChanged' | 'reviewStarted' | 'reviewDecided'>): Promise<void> {
  return afterCommit(() => tellWorkflows(c));
}

async function tellWorkflows(c: Pick<Committed, 'post' | 'scheduleChanged' | 'reviewStarted' | 'reviewDecided'>): Promise<void> {
  const { post } = c;
  if (c.scheduleChanged)
    await bestEffort('publish workflow sync deferred to the reconciler', post.id, async () =>
      syncPostSchedule(await temporalClient(), db(), post),
    );
  if (c.reviewStarted)
    await bestEffort('review workflow start deferred to the reconciler', post.id, async () =>
      startPostReview(await temporalClient(), db(), post),
    );
  // A round's workflow that misses the decision finds it in the row at its next re-check (workflows/reviewPost.ts).
  if (c.reviewDecided)
    await bestEffort('review workflow signal failed', post.id, async () =>
      signalReviewDecided(await temporalClient(), post.id, post.review_round ?? 0),
    );
}
