import { db } from '../../../lib/db';
import { errors } from '../../../lib/errors';
import { Membership } from '../../../lib/models';
import { presentPost, presentPostSummary } from '../../../lib/presenters/posts';
import type { PostRow } from '../../../lib/posts/row';
import { reviewDecided, reviewOf, reviewRequested } from '../../../lib/posts/review';
import { commitChange, loadPostForUpdate, type Committed } from '../../../lib/posts/write';
import { afterPostCommitted } from '../../../lib/posts/afterCommit';
import type { AuthContext } from '../../auth/context';
import { defineOperation } from '../../operation';
import { postSchema } from '../posts/schema';
import { single } from '../../output';
import { postsOf } from '../posts/posts';
import { awaitingReviewListSchema, decideReviewInput, listAwaitingReviewInput, requestReviewInput } from './schema';
import { filterByProject } from '../projects/resolve';

// Review before publishing (docs/review.md; spec 2.4, 2.7 `review`, 3.1, 5.4, 6). The
// transitions are lib/posts/review.ts; each operation locks the post, commits one change with
// its event, and then tells the round's workflow (workflows/reviewPost.ts).

/**
 * What every review step shares: it writes the post and answers it; a post in the wrong state
 * for the step is 409, a decision by someone other than the reviewer 403.
 */
const reviewStep = () =>
  ({
    kind: 'write',
    scopes: { allOf: ['posts:write'] },
    // An output of its own per operation: the OpenAPI document names a response after the first
    // operation that declares its schema object, and approve's answer is not request's.
    output: single(postSchema),
    errors: ['conflict', 'forbidden_project'],
  }) as const;

/** The post as the caller may see it (workspace, assigned projects, the client view), locked. */
async function lockVisible(auth: AuthContext, postId: string, trx: Parameters<typeof loadPostForUpdate>[0]): Promise<PostRow> {
  const visible = await postsOf(auth).where('posts.id', postId).select('posts.id').first();
  if (!visible) throw errors.notFound('post');
  const post = await loadPostForUpdate(trx, auth.workspaceId, postId, true);
  if (!post) throw errors.notFound('post');
  return post;
}

export const requestReview = defineOperation({
  name: 'reviews.request',
  summary: 'Send a post to review: a reviewer (a workspace member, Client role included), an optional deadline and notes.',
  ...reviewStep(),
  clientRole: 'deny',
  input: requestReviewInput,
  handler: async ({ auth }, input) => {
    const deadline = input.deadline !== undefined ? new Date(input.deadline) : null;
    if (deadline && (Number.isNaN(deadline.getTime()) || deadline.getTime() <= Date.now())) {
      throw errors.unprocessable('`deadline` must be a future date-time.', { deadline: input.deadline });
    }
    const result = await db().transaction(async (trx) => {
      const post = await lockVisible(auth, input.postId, trx);
      const reviewerUserId = input.reviewerUserId ?? post.default_reviewer_user_id ?? null;
      if (reviewerUserId !== null) {
        const member = await Membership.forWorkspace(auth.workspaceId, trx)
          .where('memberships.user_id', reviewerUserId)
          .select('memberships.id')
          .first();
        if (!member)
          throw errors.unprocessable('`reviewerUserId` is not a member of this workspace (GET /v1/team lists them).', {
            reason: 'reviewer_not_member',
            reviewerUserId,
          });
      }
      const change = reviewRequested(post, { reviewerUserId, deadline, notes: input.notes ?? null }, new Date());
      return commitChange(trx, post, change);
    });
    await afterPostCommitted(result);
    return { data: presentPost(result.post) };
  },
});

/**
 * Who may decide (docs/review.md "Deciding"): the named reviewer, acting through an OAuth token
 * (an API key acts for no person); without a named reviewer, a workspace admin.
 */
function assertDecider(auth: AuthContext, post: PostRow): void {
  const { reviewerUserId } = reviewOf(post);
  const p = auth.principal;
  const userId = p.type === 'oauth_token' ? p.actingUserId : null;
  if (reviewerUserId !== null ? userId === reviewerUserId : userId !== null && auth.role === 'admin') return;
  throw errors.forbiddenProject(
    reviewerUserId !== null
      ? 'Only the reviewer named on this review round can decide it.'
      : 'This review round names no reviewer; a workspace admin decides it.',
    { reason: 'not_reviewer' },
  );
}

function decide(decision: 'approved' | 'rejected') {
  return async ({ auth }: { auth: AuthContext }, input: { postId: string; notes?: string }) => {
    const result: Committed = await db().transaction(async (trx) => {
      const post = await lockVisible(auth, input.postId, trx);
      // The round is checked before the caller, so a decided round answers the same to everyone.
      const change = reviewDecided(post, decision, input.notes ?? null, new Date());
      assertDecider(auth, post);
      return commitChange(trx, post, change, () => ({ round: post.review_round ?? 0 }));
    });
    // The round's workflow hears of the decision; a rejection that took a scheduled post off the
    // schedule is heard by its publish workflow too.
    await afterPostCommitted(result);
    return { data: presentPost(result.post) };
  };
}

/** The reviewer's decision on the round: approve and reject differ only in the decision. */
const decisionOperation = (decision: 'approved' | 'rejected', verb: 'approve' | 'reject') =>
  defineOperation({
    name: `reviews.${verb}`,
    summary: `${verb[0]!.toUpperCase()}${verb.slice(1)} the post's review round (the reviewer only; final for the round).`,
    ...reviewStep(),
    // spec 5.4: the one write a Client-role reviewer may make (docs/review.md); the handler checks the reviewer.
    clientRole: 'narrow',
    input: decideReviewInput,
    handler: decide(decision),
  });

export const approveReview = decisionOperation('approved', 'approve');
export const rejectReview = decisionOperation('rejected', 'reject');

export const listAwaitingReview = defineOperation({
  name: 'reviews.awaiting',
  summary: "Posts whose review round awaits the caller's decision (every pending round for an API key).",
  kind: 'read',
  scopes: { allOf: ['posts:read'] },
  clientRole: 'narrow',
  input: listAwaitingReviewInput,
  output: awaitingReviewListSchema,
  handler: async ({ auth }, input) => {
    const q = postsOf(auth)
      .whereRaw(`posts.review->>'state' = 'pending'`)
      .orderBy([
        { column: 'posts.created_at', order: 'desc' },
        { column: 'posts.id', order: 'desc' },
      ])
      .limit(200);
    // spec 1 rule 1: a project of another workspace is not found, never an empty list.
    await filterByProject(auth, q, 'posts.project_id', input.projectId);
    const p = auth.principal;
    if (p.type === 'oauth_token') {
      q.where((w: typeof q) => {
        w.whereRaw(`posts.review->>'reviewerUserId' = ?`, [p.actingUserId]);
        if (auth.role === 'admin') w.orWhereRaw(`posts.review->>'reviewerUserId' is null`);
      });
    }
    const rows = (await q.select('posts.*')) as PostRow[];
    return { data: rows.map((r) => ({ ...presentPostSummary(r), review: { ...reviewOf(r) } })) };
  },
});
