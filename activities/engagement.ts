import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { Knex } from 'knex';
import { config } from '../lib/config';
import { canPublish, deriveState, STORED_CONNECTION_COLUMNS, storedConnection, type JoinedConnection } from '../lib/connectionState';
import { Project } from '../lib/models';
import { newId } from '../lib/ids';
import { isNetworkError, type NetworkClient } from '../lib/network/client';
import { connectionToken, recordCall } from '../lib/publishing/probe';
import { TokenUnavailable } from '../lib/publishing/tokens';

// Activities of engagement after publish (workflows/engagePost.ts, docs/engagement.md). Each
// like and comment is exactly once: on our side by the unique (post, account, kind) row, locked
// across the network call; on the network's by the reference the call carries.

export interface EngagementDeps {
  db: Knex;
  network: NetworkClient;
}

export type EngagementKind = 'like' | 'comment';
export interface EngagementAction {
  projectId: string;
  kind: EngagementKind;
}
export interface EngagementPlan {
  actions: EngagementAction[];
  minDelayMs: number;
  maxDelayMs: number;
}
export type EngagementResult = { state: 'done' | 'skipped' | 'failed'; already: boolean };

/** The built-in comments, used when the workspace has not set its own list. */
export const DEFAULT_ENGAGEMENT_COMMENTS = [
  'Great point, thanks for sharing.',
  'Well said.',
  'This is worth a read.',
  'Useful perspective, thank you.',
  'Agreed, and well put.',
];

/** The network's idempotency reference of one account's like or comment on one post. */
export function engagementReference(postId: string, projectId: string, kind: EngagementKind): string {
  return `${postId}.${kind}.${projectId}`;
}

/** One comment per account and post, the same on every retry. */
export function commentFor(list: readonly string[], postId: string, projectId: string): string {
  const h = createHash('sha256').update(`${postId}\n${projectId}`).digest();
  return list[h.readUInt32BE(0) % list.length]!;
}

export function createEngagementActivities({ db, network }: EngagementDeps) {
  const record = async (
    trx: Knex | Knex.Transaction,
    post: { id: string; workspace_id: string },
    projectId: string,
    kind: EngagementKind,
    state: string,
    detail: string | null,
  ) => {
    await trx('post_engagements')
      .insert({
        id: newId('engagement'),
        workspace_id: post.workspace_id,
        post_id: post.id,
        project_id: projectId,
        kind,
        state,
        reference: engagementReference(post.id, projectId, kind),
        detail,
      })
      .onConflict(['post_id', 'project_id', 'kind'])
      .ignore();
  };

  return {
    /**
     * Who engages with a published post: the workspace's amplifier accounts other than the
     * post's own, for each flag set on the post. Accounts that cannot publish (spec 2.6
     * canPublish false) are recorded as skipped and left out.
     */
    async planEngagement(postId: string): Promise<EngagementPlan> {
      const { minDelaySeconds, maxDelaySeconds } = config.engagement;
      const plan: EngagementPlan = {
        actions: [],
        minDelayMs: minDelaySeconds * 1000,
        maxDelayMs: Math.max(minDelaySeconds, maxDelaySeconds) * 1000,
      };
      const post = await db('posts')
        .where({ id: postId, status: 'published' })
        .whereNull('deleted_at')
        .whereNotNull('network_post_urn')
        .first('id', 'workspace_id', 'project_id', 'auto_like', 'auto_comment');
      if (!post) return plan;
      const kinds: EngagementKind[] = [...(post.auto_like ? ['like' as const] : []), ...(post.auto_comment ? ['comment' as const] : [])];
      if (kinds.length === 0) return plan;
      const accounts = await Project.activeFor({ workspaceId: post.workspace_id, projectIds: null }, db)
        .leftJoin('network_connections as c', 'c.id', 'projects.connection_id')
        .where('projects.type', 'AMPLIFIER')
        .whereNot('projects.id', post.project_id)
        .orderBy('projects.id')
        .select('projects.id', 'c.id as connection_id', ...STORED_CONNECTION_COLUMNS)
        .castTo<Array<{ id: string; connection_id: string | null } & JoinedConnection>>();
      for (const a of accounts) {
        const state = a.connection_id ? deriveState(storedConnection(a)) : 'disconnected';
        for (const kind of kinds) {
          if (canPublish(state)) plan.actions.push({ projectId: a.id, kind });
          else await record(db, post, a.id, kind, 'skipped', `The account cannot publish (connection ${state}).`);
        }
      }
      return plan;
    },

    /** One account's like or comment, once. A transient network failure throws, so Temporal retries it. */
    async engage(input: { postId: string } & EngagementAction): Promise<EngagementResult> {
      return db.transaction(async (trx) => {
        const post = await trx('posts as p')
          .join('workspaces as w', 'w.id', 'p.workspace_id')
          .where('p.id', input.postId)
          .first('p.id', 'p.workspace_id', 'p.network_post_urn', 'w.engagement_comments');
        if (!post?.network_post_urn) return { state: 'skipped', already: false } as const;
        await record(trx, post, input.projectId, input.kind, 'pending', null);
        const row = await trx('post_engagements')
          .where({ post_id: input.postId, project_id: input.projectId, kind: input.kind })
          .forUpdate()
          .first();
        if (row.state !== 'pending') return { state: row.state, already: true };
        const finish = async (
          state: 'done' | 'skipped' | 'failed',
          detail: string | null,
          networkRef: string | null = null,
        ): Promise<EngagementResult> => {
          await trx('post_engagements').where({ id: row.id }).update({ state, detail, network_ref: networkRef, done_at: new Date() });
          return { state, already: false };
        };
        const project = await trx('projects').where({ id: input.projectId }).first('connection_id');
        if (!project?.connection_id) return finish('skipped', 'The account is not connected to the network.');
        const t = await connectionToken(trx, network, project.connection_id);
        if (!t.ok) {
          if (t.failure instanceof TokenUnavailable) return finish('skipped', `The account cannot publish (${t.failure.reason}).`);
          throw ApplicationFailure.retryable(`token refresh failed: ${String((t.failure as Error).message)}`, 'EngagementTransient');
        }
        const base = {
          accessToken: t.token,
          actor: { type: 'person' as const, id: t.personId! },
          postUrn: post.network_post_urn,
          reference: row.reference,
        };
        try {
          if (input.kind === 'like') {
            await network.likePost(base);
            await recordCall(trx, project.connection_id, 'publish', 'ok');
            return finish('done', null);
          }
          const list: string[] =
            Array.isArray(post.engagement_comments) && post.engagement_comments.length
              ? post.engagement_comments
              : DEFAULT_ENGAGEMENT_COMMENTS;
          const { commentUrn } = await network.commentOnPost({ ...base, text: commentFor(list, input.postId, input.projectId) });
          await recordCall(trx, project.connection_id, 'publish', 'ok');
          return finish('done', null, commentUrn);
        } catch (err) {
          if (!isNetworkError(err) || err.kind === 'transient') throw err;
          await recordCall(trx, project.connection_id, 'publish', err);
          return finish('failed', `The network refused the ${input.kind} (${err.code}).`);
        }
      });
    },
  };
}

export type EngagementActivities = ReturnType<typeof createEngagementActivities>;
