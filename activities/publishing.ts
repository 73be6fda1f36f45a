import { ApplicationFailure } from '@temporalio/activity';
import type { Knex } from 'knex';
import type { Client } from '@temporalio/client';
import { config } from '../lib/config';
import type { Author, NetworkClient } from '../lib/network/client';
import { isNetworkError } from '../lib/network/errors';
import { emitEvent } from '../lib/outbox';
import { presentPost, type PostRow } from '../lib/posts/present';
import { defaultStatus } from '../lib/posts/statuses';
import { loadPostForUpdate } from '../lib/posts/write';
import { recordConnectionFailure, recordConnectionSuccess, TokenUnavailable, usableAccessToken } from '../lib/publishing/tokens';
import { syncPublishWorkflow, ensureHealthWorkflow } from '../lib/publishing/workflows';
import { uploadPostImages } from '../lib/publishing/postImages';
import { objectStore, type ObjectStore } from '../lib/storage/objectStore';

// Activities of scheduled publishing and connection health (ARCHITECTURE.md: every side effect
// is an activity; every activity is safe to run twice).

export interface PublishingDeps { db: Knex; network: NetworkClient; temporal: () => Promise<Client>; store?: () => ObjectStore }

export interface ScheduleSnapshot {
  status: string;
  version: number;
  scheduledAtMs: number | null;
  delaySeconds: number;
  retryWindowSeconds: number;
  retryBaseSeconds: number;
}

export type PublishOutcome =
  | { outcome: 'published'; postUrn: string; already: boolean }
  | { outcome: 'stale' }
  | { outcome: 'transient'; error: string; retryAfterMs: number | null }
  | { outcome: 'failed'; error: string };

function authorOf(post: { type: string; network_organization_id: string | null }, personId: string | null): Author {
  if (post.type === 'COMPANY_PAGE') return { type: 'organization', id: post.network_organization_id! };
  return { type: 'person', id: personId! };
}

export function createPublishingActivities({ db, network, temporal, store = objectStore }: PublishingDeps) {
  async function markFailed(trx: Knex.Transaction, post: PostRow, error: string, detail: string) {
    await trx('posts').where({ id: post.id }).update({
      status: 'failed_to_publish', last_publish_error: error, last_publish_attempt_at: trx.fn.now(), updated_at: trx.fn.now(),
      delivery: JSON.stringify({ state: 'failed', willRetry: false, retryUntil: null, detail }),
    });
    const updated = (await loadPostForUpdate(trx, post.workspace_id, post.id))!;
    await emitEvent(trx, { workspaceId: post.workspace_id, projectId: post.project_id, type: 'post.publish_failed', data: { post: presentPost(updated) } });
  }

  return {
    /** A read: what the workflow should wait for now. */
    async loadSchedule(postId: string): Promise<ScheduleSnapshot | null> {
      const p = await db('posts').where({ id: postId }).whereNull('deleted_at').first('status', 'schedule_version', 'scheduled_at');
      if (!p) return null;
      return {
        status: p.status, version: p.schedule_version, scheduledAtMs: p.scheduled_at ? p.scheduled_at.getTime() : null,
        delaySeconds: config.publish.delaySeconds, retryWindowSeconds: config.publish.retryWindowSeconds,
        retryBaseSeconds: config.publish.retryBaseSeconds,
      };
    },

    /**
     * Publishes the post if, under its row lock, it is still scheduled at `version`. The row
     * lock is held across the network call, so a concurrent reschedule either lands before
     * (this attempt sees a new version and does nothing) or after (it sees `published`).
     * The network call carries the post id as its idempotency reference and a retry first
     * looks the reference up, so a crash between the call and the commit cannot post twice.
     */
    async publishPost(input: { postId: string; version: number; attempt: number; retryUntilMs: number }): Promise<PublishOutcome> {
      return db.transaction(async (trx) => {
        const post = (await trx('posts').where({ id: input.postId }).forUpdate().first()) as PostRow | undefined;
        if (!post || (post as { deleted_at?: Date | null }).deleted_at) return { outcome: 'stale' } as const;
        if (post.status === 'published') return { outcome: 'published', postUrn: post.network_post_urn ?? '', already: true } as const;
        if (post.status !== 'scheduled' || post.schedule_version !== input.version) return { outcome: 'stale' } as const;
        const project = await trx('projects').where({ id: post.project_id }).first('id', 'type', 'connection_id', 'network_organization_id');
        if (!project?.connection_id) {
          await markFailed(trx, post, 'not_linked', 'The project is not linked to a network account.');
          return { outcome: 'failed', error: 'not_linked' } as const;
        }
        let token: string;
        let personId: string | null;
        try {
          const t = await usableAccessToken(trx, network, project.connection_id);
          token = t.token;
          personId = t.connection.network_person_id;
        } catch (err) {
          if (err instanceof TokenUnavailable) {
            // spec 3.1: a permanently failed token refresh ends in failed_to_publish.
            if (err.reason === 'refresh_failed') await recordConnectionFailure(trx, project.connection_id, err.message, { revokeNow: true });
            await markFailed(trx, post, `token_${err.reason}`, err.message);
            return { outcome: 'failed', error: `token_${err.reason}` } as const;
          }
          return transient(trx, post, input, err);
        }
        const author = authorOf(project, personId);
        try {
          let urn: string | null = null;
          if (post.last_publish_attempt_at) urn = (await network.findPostByReference(token, author, post.id))?.postUrn ?? null;
          if (!urn) {
            // The post's images go up just before the post that references them (lib/publishing/postImages.ts).
            const images = await uploadPostImages({ db: trx, network, store: store(), accessToken: token, author, post });
            urn = (await network.createPost({ accessToken: token, author, text: post.content, reference: post.id, images })).postUrn;
          }
          const published = await defaultStatus(trx, post.workspace_id, 'published');
          await trx('posts').where({ id: post.id }).update({
            status: 'published', published_at: trx.fn.now(), network_post_urn: urn, last_publish_attempt_at: trx.fn.now(), last_publish_error: null,
            status_id: published?.id ?? post.status_id, updated_at: trx.fn.now(), delivery: JSON.stringify({ state: 'published', willRetry: false, retryUntil: null, detail: null }),
          });
          await recordConnectionSuccess(trx, project.connection_id);
          const updated = (await loadPostForUpdate(trx, post.workspace_id, post.id))!;
          await emitEvent(trx, { workspaceId: post.workspace_id, projectId: post.project_id, type: 'post.published', data: { post: presentPost(updated) } });
          return { outcome: 'published', postUrn: urn, already: false } as const;
        } catch (err) {
          if (isNetworkError(err) && err.kind !== 'transient') {
            // Only credential failures say something about the connection (spec 3.4); a refused
            // post (too long, forbidden content) does not count toward revocation.
            if (err.kind === 'auth') await recordConnectionFailure(trx, project.connection_id, err.code, { revokeNow: err.code === 'token_revoked' });
            await markFailed(trx, post, err.code, `The network refused the post (${err.code}).`);
            return { outcome: 'failed', error: err.code } as const;
          }
          return transient(trx, post, input, err);
        }
      });
    },

    /** The retry window closed on transient failures: give up truthfully. */
    async markPublishFailed(input: { postId: string; version: number; error: string }): Promise<boolean> {
      return db.transaction(async (trx) => {
        const post = (await trx('posts').where({ id: input.postId }).forUpdate().first()) as PostRow | undefined;
        if (!post || post.status !== 'scheduled' || post.schedule_version !== input.version) return false;
        await markFailed(trx, post, input.error, `Publishing kept failing until the retry window closed: ${input.error}.`);
        return true;
      });
    },

    /** spec 3.4: one health probe of the project's connection; reading a project never probes. */
    async checkConnection(projectId: string): Promise<{ exists: boolean; ok: boolean | null; failures: number; intervalSeconds: number }> {
      const intervalSeconds = config.network.healthCheckIntervalS;
      const project = await db('projects').where({ id: projectId }).first('id', 'type', 'connection_id', 'network_organization_id');
      if (!project) return { exists: false, ok: null, failures: 0, intervalSeconds };
      if (!project.connection_id) return { exists: true, ok: null, failures: 0, intervalSeconds };
      return db.transaction(async (trx) => {
        let token: string;
        try {
          token = (await usableAccessToken(trx, network, project.connection_id)).token;
        } catch (err) {
          if (err instanceof TokenUnavailable && (err.reason === 'no_token' || err.reason === 'revoked')) return { exists: true, ok: null, failures: 0, intervalSeconds };
          const r = await recordConnectionFailure(trx, project.connection_id, err instanceof Error ? err.message : String(err));
          return { exists: true, ok: false, failures: r.failures, intervalSeconds };
        }
        try {
          if (project.type === 'COMPANY_PAGE') {
            const admins = await network.listOrganizationAdmins(token, project.network_organization_id);
            if (admins.length === 0) {
              const r = await recordConnectionFailure(trx, project.connection_id, 'no_admins');
              return { exists: true, ok: false, failures: r.failures, intervalSeconds };
            }
          } else {
            await network.getIdentity(token);
          }
          await recordConnectionSuccess(trx, project.connection_id);
          return { exists: true, ok: true, failures: 0, intervalSeconds };
        } catch (err) {
          const r = await recordConnectionFailure(trx, project.connection_id, isNetworkError(err) ? err.code : String(err));
          return { exists: true, ok: false, failures: r.failures, intervalSeconds };
        }
      });
    },

    /**
     * Catches up schedule changes whose workflow signal was lost (API crashed between commit and
     * signal, Temporal down), and makes sure every linked project has its health workflow.
     */
    async reconcile(): Promise<{ synced: number; healthStarted: number }> {
      const client = await temporal();
      const posts = await db('posts').whereRaw('workflow_synced_version < schedule_version').limit(500).select('id', 'workspace_id', 'project_id', 'schedule_version');
      for (const p of posts) await syncPublishWorkflow(client, db, p);
      const projects = await db('projects').whereNotNull('connection_id').select('id', 'workspace_id');
      let healthStarted = 0;
      for (const p of projects) if (await ensureHealthWorkflow(client, p)) healthStarted++;
      return { synced: posts.length, healthStarted };
    },
  };

  async function transient(trx: Knex.Transaction, post: PostRow, input: { retryUntilMs: number }, err: unknown): Promise<PublishOutcome> {
    if (!isNetworkError(err)) throw ApplicationFailure.retryable(err instanceof Error ? err.message : String(err), 'PublishInfrastructureError');
    await trx('posts').where({ id: post.id }).update({
      last_publish_attempt_at: trx.fn.now(), last_publish_error: err.code,
      delivery: JSON.stringify({ state: 'retrying', willRetry: true, retryUntil: new Date(input.retryUntilMs).toISOString(), detail: `The network did not accept the post yet (${err.code}); retrying.` }),
    });
    return { outcome: 'transient', error: err.code, retryAfterMs: err.retryAfterMs ?? null };
  }
}

export type PublishingActivities = ReturnType<typeof createPublishingActivities>;
