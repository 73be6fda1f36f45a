import type { Knex } from 'knex';
import type { PostRow } from '../lib/posts/row';
import { reviewOf, reviewOverdue } from '../lib/posts/review';
import { commitChange, loadPostForUpdate } from '../lib/posts/write';

// Activities of the review workflow (workflows/reviewPost.ts, docs/review.md). Both are safe to
// run twice: they act only on the round they name, and only while it awaits a decision.

export interface ReviewDeps {
  db: Knex;
}

async function lockedPost(trx: Knex.Transaction, postId: string): Promise<PostRow | undefined> {
  const ws = await trx('posts').where({ id: postId }).first('workspace_id');
  return ws ? loadPostForUpdate(trx, ws.workspace_id, postId, true) : undefined;
}

export function createReviewActivities({ db }: ReviewDeps) {
  return {
    /** The deadline passed: mark the round overdue and emit the reminder (post.review_overdue), once. */
    async markReviewOverdue(input: { postId: string; round: number }): Promise<boolean> {
      return db.transaction(async (trx) => {
        const post = await lockedPost(trx, input.postId);
        if (!post) return false;
        const r = await commitChange(trx, post, reviewOverdue(post, input.round, new Date()), () => ({ round: input.round }));
        return r.changed || (reviewOf(post).overdue && post.review_round === input.round);
      });
    },

    /** A read: is this round still awaiting a decision? */
    async reviewRoundOpen(input: { postId: string; round: number }): Promise<boolean> {
      const p = await db('posts').where({ id: input.postId }).whereNull('deleted_at').first('review', 'review_round');
      return !!p && p.review_round === input.round && reviewOf(p).state === 'pending';
    },
  };
}

export type ReviewActivities = ReturnType<typeof createReviewActivities>;
