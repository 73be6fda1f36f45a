import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import type { Client } from '@temporalio/client';
import { config } from '../lib/config';
import type { Author, NetworkClient } from '../lib/network/client';
import { isNetworkError } from '../lib/network/errors';
import { markScheduleSynced, syncPostSchedule, unsyncedSchedules } from '../lib/posts/afterCommit';
import { failed, published, retrying } from '../lib/posts/lifecycle';
import type { PostRow } from '../lib/posts/row';
import { heldForReview, reviewBlocker } from '../lib/posts/review';
import { commitChange } from '../lib/posts/write';
import { connectionToken, probeConnection, recordCall } from '../lib/publishing/probe';
import { TokenUnavailable } from '../lib/publishing/tokens';
import { uploadPostImages } from '../lib/publishing/postImages';
import { objectStore, type ObjectStore } from '../lib/storage/objectStore';
import { scheduleSnapshot, type ScheduleSnapshot } from '../lib/publishing/schedule';
import { ensureHealthWorkflow } from '../lib/temporal/start/connectionHealth';

/** Tells Temporal the publish step is alive (a regular activity; a local one has no heartbeat). */
function heartbeat(): void {
  try {
    const ctx = Context.current();
    if (!ctx.info.isLocal) ctx.heartbeat();
  } catch {
    // Called outside an activity (a unit test calling the function directly).
  }
}

// Activities of scheduled publishing and connection health (ARCHITECTURE.md: every side effect
// is an activity; every activity is safe to run twice).

export interface PublishingDeps {
  db: Knex;
  network: NetworkClient;
  temporal: () => Promise<Client>;
  store?: () => ObjectStore;
}

export type { ScheduleSnapshot } from '../lib/publishing/schedule';

export type PublishOutcome =
  // lagMs: how long after its scheduled time this call published the post (not set when `already`).
  | { outcome: 'published'; postUrn: string; already: boolean; engage?: boolean; lagMs?: number }
  // The row moved on from the version the step was called for. `schedule`: the row as the lock
  // found it (null: deleted), which the workflow takes up without reading the row again; absent
  // (a post held for review, or an older worker): the workflow reads the row.
  | { outcome: 'stale'; schedule?: ScheduleSnapshot | null }
  | { outcome: 'transient'; error: string; retryAfterMs: number | null }
  | { outcome: 'failed'; error: string };

function authorOf(post: { type: string; network_organization_id: string | null }, personId: string | null): Author {
  if (post.type === 'COMPANY_PAGE') return { type: 'organization', id: post.network_organization_id! };
  return { type: 'person', id: personId! };
}

/**
 * The publish step's review re-check (docs/review.md "Withdrawn before publish time"): a post
 * whose review does not allow publishing goes back to review, off the schedule, and is not
 * published. Its schedule version moves, so the workflow re-reads it and ends.
 */
async function heldForReviewAtPublish(trx: Knex.Transaction, post: PostRow): Promise<boolean> {
  const reason = reviewBlocker(post, !!post.require_review_workflow);
  if (!reason) return false;
  const committed = await commitChange(trx, post, heldForReview(post, reason, new Date()));
  // This step is the workflow the change concerns: it hears of it through the `stale` answer.
  await markScheduleSynced(trx, committed.post);
  return true;
}

/** The project columns the publish step reads with the post. */
interface PublishProject {
  type: string;
  connection_id: string | null;
  network_organization_id: string | null;
}

/**
 * The publish step's one read (docs/publishing.md "Capacity"): the post locked (`FOR UPDATE OF`
 * the post alone), with its workspace's review setting and its project's connection in the same
 * statement instead of two more round trips. The workspace and project values are as of the
 * statement, as the separate reads after the lock were within a transaction of the same step.
 */
async function lockForPublish(
  trx: Knex.Transaction,
  postId: string,
): Promise<{ post: PostRow & { deleted_at: Date | null }; project: PublishProject | null } | undefined> {
  const row = await trx('posts as p')
    .join('workspaces as w', 'w.id', 'p.workspace_id')
    .leftJoin('projects as pr', 'pr.id', 'p.project_id')
    .where('p.id', postId)
    .forUpdate('p')
    .first(
      'p.*',
      'w.require_review_workflow',
      'pr.id as publish_project_id',
      'pr.type as publish_project_type',
      'pr.connection_id as publish_project_connection_id',
      'pr.network_organization_id as publish_project_organization_id',
      // The zone the workflow shows its times in, for the schedule a stale step hands back.
      'pr.timezone',
    );
  if (!row) return undefined;
  const {
    publish_project_id: projectId,
    publish_project_type: type,
    publish_project_connection_id: connectionId,
    publish_project_organization_id: organizationId,
    ...post
  } = row;
  const project = projectId ? { type, connection_id: connectionId, network_organization_id: organizationId } : null;
  return { post: post as PostRow & { deleted_at: Date | null }, project };
}

export function createPublishingActivities({ db, network, temporal, store = objectStore }: PublishingDeps) {
  const fail = async (trx: Knex.Transaction, post: PostRow, error: string, detail: string): Promise<PublishOutcome> => {
    await commitChange(trx, post, failed(post, { error, detail }, new Date()));
    return { outcome: 'failed', error };
  };

  /**
   * spec 3.1: a failure the workflow retries until the window closes (docs/publishing.md step 4).
   * Only network failures are outcomes; anything else is infrastructure, retried by Temporal.
   */
  const retry = async (trx: Knex.Transaction, post: PostRow, retryUntilMs: number, err: unknown): Promise<PublishOutcome> => {
    if (!isNetworkError(err))
      throw ApplicationFailure.retryable(err instanceof Error ? err.message : String(err), 'PublishInfrastructureError');
    await commitChange(trx, post, retrying(post, { error: err.code, retryUntil: new Date(retryUntilMs) }, new Date()));
    return { outcome: 'transient', error: err.code, retryAfterMs: err.retryAfterMs ?? null };
  };

  /**
   * The step that puts the post on the network, under the post's row lock. A retry first looks
   * the reference up, so a crash between the call and the commit cannot post twice.
   */
  const createOnNetwork = async (trx: Knex.Transaction, post: PostRow, token: string, author: Author): Promise<string> => {
    if (post.last_publish_attempt_at) {
      const found = await network.findPostByReference(token, author, post.id);
      if (found) return found.postUrn;
    }
    // The post's images go up just before the post that references them (lib/publishing/postImages.ts):
    // an image uploaded twice after a crash is harmless, the post itself is created once.
    const images = await uploadPostImages({ db: trx, network, store: store(), accessToken: token, author, post });
    return (await network.createPost({ accessToken: token, author, text: post.content, reference: post.id, images })).postUrn;
  };

  // The reconciler's place in the linked projects, per process: the database time of the previous
  // pass (projects changed since then are looked at again) and the last id of the rolling sweep.
  const health = { since: null as Date | null, sweepAfter: '' };
  const healthCandidates = async (): Promise<Array<{ id: string; workspace_id: string }>> => {
    const { rows } = await db.raw('select now() as now');
    const now: Date = rows[0].now;
    // A project linked in a transaction that began before this pass commits after it: look back
    // a minute so its updated_at (the transaction's start) is still seen by the next pass.
    const since = health.since ?? new Date(now.getTime() - 10 * 60_000);
    const changed = await db('projects')
      .whereNotNull('connection_id')
      .where('updated_at', '>=', since)
      .orderBy('updated_at')
      .limit(5000)
      .select('id', 'workspace_id');
    const page = config.worker.healthSweepPage;
    const sweep = await db('projects')
      .whereNotNull('connection_id')
      .where('id', '>', health.sweepAfter)
      .orderBy('id')
      .limit(page)
      .select('id', 'workspace_id');
    health.sweepAfter = sweep.length < page ? '' : sweep[sweep.length - 1].id;
    health.since = new Date(now.getTime() - 60_000);
    const seen = new Set<string>();
    return [...changed, ...sweep].filter((p) => !seen.has(p.id) && seen.add(p.id));
  };

  return {
    /** A read: what the workflow should wait for now. */
    async loadSchedule(postId: string): Promise<ScheduleSnapshot | null> {
      const p = await db('posts')
        .leftJoin('projects', 'projects.id', 'posts.project_id')
        .where('posts.id', postId)
        .whereNull('posts.deleted_at')
        .first('posts.status', 'posts.schedule_version', 'posts.scheduled_at', 'projects.timezone');
      return p ? scheduleSnapshot(p) : null;
    },

    /**
     * Publishes the post if, under its row lock, it is still scheduled at `version`. The row
     * lock is held across the network call, so a concurrent reschedule either lands before
     * (this attempt sees a new version and does nothing) or after (it sees `published`).
     * The network call carries the post id as its idempotency reference and a retry first
     * looks the reference up, so a crash between the call and the commit cannot post twice.
     * Every network call is reported to the connection's failure streak (lib/publishing/probe.ts).
     */
    async publishPost(input: { postId: string; version: number; attempt: number; retryUntilMs: number }): Promise<PublishOutcome> {
      return db.transaction(async (trx) => {
        // 1. The post, locked, still scheduled at the version the timer was set for.
        const locked = await lockForPublish(trx, input.postId);
        if (!locked || locked.post.deleted_at) return { outcome: 'stale', schedule: null } as const;
        const { post, project } = locked;
        if (post.status === 'published') return { outcome: 'published', postUrn: post.network_post_urn ?? '', already: true } as const;
        if (post.status !== 'scheduled' || post.schedule_version !== input.version)
          return { outcome: 'stale', schedule: scheduleSnapshot(post) } as const;
        // docs/review.md: the approval is re-checked here as the version is; a withdrawn one holds the post.
        if (await heldForReviewAtPublish(trx, post)) return { outcome: 'stale' } as const;
        if (!project?.connection_id) return fail(trx, post, 'not_linked', 'The project is not linked to a network account.');
        const connectionId: string = project.connection_id;

        // 2. A usable token (refreshed when it lapses soon).
        const t = await connectionToken(trx, network, connectionId);
        if (!t.ok) {
          // spec 3.1: a permanently failed token refresh ends in failed_to_publish.
          if (t.failure instanceof TokenUnavailable) return fail(trx, post, `token_${t.failure.reason}`, t.failure.message);
          return retry(trx, post, input.retryUntilMs, t.failure);
        }

        // 3. The post on the network.
        heartbeat();
        let postUrn: string;
        try {
          postUrn = await createOnNetwork(trx, post, t.token, authorOf(project, t.personId));
        } catch (err) {
          if (!isNetworkError(err)) return retry(trx, post, input.retryUntilMs, err);
          await recordCall(trx, connectionId, 'publish', err);
          if (err.kind !== 'transient') return fail(trx, post, err.code, `The network refused the post (${err.code}).`);
          return retry(trx, post, input.retryUntilMs, err);
        }
        await recordCall(trx, connectionId, 'publish', 'ok');

        // 4. Published, with post.published in the outbox.
        const publishedAt = new Date();
        await commitChange(trx, post, published(post, { postUrn }, publishedAt));
        const lagMs = post.scheduled_at ? Math.max(0, publishedAt.getTime() - post.scheduled_at.getTime()) : undefined;
        // docs/engagement.md: the workflow continues with the engagement when a flag is on.
        return { outcome: 'published', postUrn, already: false, engage: post.auto_like || post.auto_comment, lagMs } as const;
      });
    },

    /** The retry window closed on transient failures: give up truthfully. */
    async markPublishFailed(input: { postId: string; version: number; error: string }): Promise<boolean> {
      return db.transaction(async (trx) => {
        const post = (await trx('posts').where({ id: input.postId }).forUpdate().first()) as PostRow | undefined;
        if (!post || post.status !== 'scheduled' || post.schedule_version !== input.version) return false;
        await fail(trx, post, input.error, `Publishing kept failing until the retry window closed: ${input.error}.`);
        return true;
      });
    },

    /**
     * spec 3.4: one health probe of the project's connection (lib/publishing/probe.ts, the same
     * probe PATCH scheduling runs); reading a project never probes. `ok` is null when there is
     * nothing to check (no connection, no token, revoked); `failures` is the streak after this
     * check, null when the check did not move it (docs/publishing.md "The failure streak").
     */
    async checkConnection(
      projectId: string,
    ): Promise<{ exists: boolean; ok: boolean | null; failures: number | null; intervalSeconds: number }> {
      const intervalSeconds = config.network.healthCheckIntervalS;
      const project = await db('projects').where({ id: projectId }).first('id', 'type', 'connection_id', 'network_organization_id');
      if (!project) return { exists: false, ok: null, failures: 0, intervalSeconds };
      if (!project.connection_id) return { exists: true, ok: null, failures: 0, intervalSeconds };
      const target = { connectionId: project.connection_id, type: project.type, organizationId: project.network_organization_id };
      const r = await db.transaction((trx) => probeConnection(trx, network, target));
      if (r.ok) return { exists: true, ok: true, failures: 0, intervalSeconds };
      if (r.reason === 'no_token' || r.reason === 'revoked') return { exists: true, ok: null, failures: null, intervalSeconds };
      return { exists: true, ok: false, failures: r.failures, intervalSeconds };
    },

    /**
     * Catches up schedule changes whose workflow signal was lost (API crashed between commit and
     * signal, Temporal down), and makes sure every linked project has its health workflow.
     * Incremental (docs/publishing.md "The reconciler"): a pass touches the posts whose version
     * moved past the one their workflow knows, the projects linked or changed since the previous
     * pass, and one page of a rolling sweep over all linked projects, never every project.
     * Review rounds, jobs and spend are the maintenance activity's (activities/maintenance.ts).
     */
    async reconcile(): Promise<{ synced: number; healthStarted: number; healthChecked?: number }> {
      const client = await temporal();
      const posts = await unsyncedSchedules(db, 500);
      for (const p of posts) await syncPostSchedule(client, db, p);
      const projects = await healthCandidates();
      let healthStarted = 0;
      for (const p of projects) if (await ensureHealthWorkflow(client, p)) healthStarted++;
      return { synced: posts.length, healthStarted, healthChecked: projects.length };
    },
  };
}

export type PublishingActivities = ReturnType<typeof createPublishingActivities>;
