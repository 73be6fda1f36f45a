import type { TransactionOrKnex } from 'objection';
import { z } from 'zod';
import { db } from '../../../lib/db';
import { errors } from '../../../lib/errors';
import { Post } from '../../../lib/models';
import { deleted, onSchedule } from '../../../lib/posts/lifecycle';
import { presentPost } from '../../../lib/presenters/posts';
import type { PostRow } from '../../../lib/posts/row';
import { afterPostCommitted } from '../../../lib/posts/afterCommit';
import { commitChange } from '../../../lib/posts/write';
import { mintDeleteConfirmation, readDeleteConfirmation } from '../../../lib/tokens';
import type { AuthContext } from '../../auth/context';
import { defineOperation } from '../../operation';
import { postDeletionSchema } from './schema';

// spec 3.1 (last row) and 4.9 delete_post: the agent transport's delete, two-phase, scope
// posts:destroy. There is no REST delete (spec 4.4), so this operation has no REST route.
//
// Phase 1 (no confirmationToken) changes nothing: it answers what would be deleted, what
// follows from it, and a confirmation token. Phase 2 (with the token) deletes. The token is
// signed, lives CONFIRMATION_TTL_MS, and is bound to the post, the workspace, the exact
// credential that asked (principal id), and the post's status and schedule version at preview
// time: if the post was published or rescheduled in between, the preview no longer describes
// what would happen and the delete is refused with 409 conflict (ask again).
//
// The delete is soft (posts.deleted_at): every read already filters it out, the calendar slot
// goes, and a scheduled post's publish workflow is told (schedule_version bump + signal; the
// reconciler delivers the signal if Temporal is down). The publish activity re-checks
// deleted_at under the row lock, so a deleted post can never publish afterwards. A published
// post keeps its copy on the network and its row (analytics history); only the service's copy
// disappears. Emits post.deleted (spec 6).

export const CONFIRMATION_TTL_MS = 5 * 60_000;

export const deletePostInput = z
  .object({
    postId: z.string().min(1).max(100),
    confirmationToken: z.string().min(1).max(1000).optional(),
  })
  .strict();

/** The post as its owner sees it, deleted or not (a retried phase 2 must find its own delete). */
async function visiblePost(auth: AuthContext, postId: string, trx?: TransactionOrKnex) {
  return Post.visibleTo(auth, trx)
    .leftJoin('post_statuses as s', 's.id', 'posts.status_id')
    .join('workspaces as w', 'w.id', 'posts.workspace_id')
    .where('posts.id', postId)
    .select('posts.*', 's.title as status_title', 's.category as status_category', 'w.require_review_workflow')
    .first()
    .castTo<(PostRow & { deleted_at: Date | null }) | undefined>();
}

function effectsOf(p: PostRow) {
  const published = p.status === 'published';
  return {
    cancelsScheduledPublish: !published && onSchedule(p),
    // spec 3.1: the network post stays live; only the service's copy is removed.
    networkCopy: published ? ('stays_live' as const) : ('none' as const),
    analyticsHistoryKept: published,
  };
}

function deletionResult(p: PostRow & { deleted_at: Date | null }) {
  return { id: p.id, deleted: true as const, deletedAt: p.deleted_at!.toISOString(), statusAtDeletion: p.status, ...effectsOf(p) };
}

export const deletePost = defineOperation({
  name: 'posts.delete',
  summary: 'Two-phase delete of a post: without confirmationToken, a preview and a token; with it, the delete.',
  kind: 'write',
  // spec 5.2 rule 3: *:destroy is never implied by write or any alias.
  scopes: { allOf: ['posts:destroy'] },
  clientRole: 'deny',
  input: deletePostInput,
  output: postDeletionSchema,
  handler: async ({ auth }, input) => {
    const post = await visiblePost(auth, input.postId);
    if (!post) throw errors.notFound('post');

    if (input.confirmationToken === undefined) {
      if (post.deleted_at) throw errors.notFound('post');
      const { token: confirmationToken, expiresAt } = await mintDeleteConfirmation(
        {
          postId: post.id,
          workspaceId: auth.workspaceId,
          principalId: auth.principal.id,
          status: post.status,
          scheduleVersion: post.schedule_version,
        },
        CONFIRMATION_TTL_MS,
      );
      return {
        data: {
          post: presentPost(post),
          wouldDelete: true as const,
          ...effectsOf(post),
          confirmationToken,
          confirmationExpiresAt: expiresAt.toISOString(),
        },
      };
    }

    const claims = await readDeleteConfirmation(input.confirmationToken);
    if (!claims || claims.postId !== post.id || claims.workspaceId !== auth.workspaceId || claims.principalId !== auth.principal.id) {
      throw errors.unprocessable(
        '`confirmationToken` is not a confirmation for this post and credential; call delete_post without it first.',
        { reason: 'confirmation_invalid' },
      );
    }
    // A retry of a phase 2 that already went through answers the same delete again.
    if (post.deleted_at) return { data: deletionResult(post) };
    if (claims.expiresAt <= Date.now()) {
      throw errors.unprocessable('The confirmation has expired; call delete_post without a token to get a new one.', {
        reason: 'confirmation_expired',
      });
    }

    const outcome = await db().transaction(async (trx) => {
      const locked = (await Post.forWorkspace(auth.workspaceId, trx).findById(post.id).forUpdate()) as
        (PostRow & { deleted_at: Date | null }) | undefined;
      if (!locked) throw errors.notFound('post');
      if (locked.deleted_at) return { post: { ...post, deleted_at: locked.deleted_at }, scheduleChanged: false };
      if (locked.status !== claims.status || locked.schedule_version !== claims.scheduleVersion) {
        throw errors.conflict(
          'The post changed since the confirmation was issued; call delete_post without a token to see what a delete would do now.',
          { reason: 'post_changed', retryable: true },
        );
      }
      // spec 3.1: the lifecycle's `deleted` (slot cleared, a scheduled post's version bumped so its
      // workflow finds it gone) with post.deleted in the outbox.
      const done = await commitChange(trx, locked, deleted(locked, new Date()), (row) =>
        deletionResult(row as PostRow & { deleted_at: Date }),
      );
      return { post: done.post as PostRow & { deleted_at: Date | null }, scheduleChanged: done.scheduleChanged };
    });
    await afterPostCommitted(outcome);
    return { data: deletionResult(outcome.post) };
  },
});
