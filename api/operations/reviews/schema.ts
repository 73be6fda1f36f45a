import { z } from 'zod';
import { boundedText, isoDateTime } from '../../validation';
import { component } from '../../output';
import { postSummaryShape } from '../posts/schema';

// docs/review.md: the review operations' inputs (additions under spec 9.3).

const id = z.string().min(1).max(100);
const notes = boundedText(2_000, 'notes');

export const requestReviewInput = z
  .object({
    postId: id,
    /** A member of the workspace, of any role including Client; default the workspace's default reviewer. */
    reviewerUserId: id.optional(),
    deadline: isoDateTime.optional(),
    notes: notes.optional(),
  })
  .strict();

export const decideReviewInput = z
  .object({
    postId: id,
    notes: notes.optional(),
  })
  .strict();

export const listAwaitingReviewInput = z
  .object({
    projectId: id.optional(),
  })
  .strict();

export type RequestReviewInput = z.infer<typeof requestReviewInput>;
export type DecideReviewInput = z.infer<typeof decideReviewInput>;

// ---- outputs (GET /v1/reviews/awaiting) ----------------------------------------------------------

/** A post summary with its review block (open: the review round is a block still growing). */
export const postAwaitingReviewSchema = component(
  'PostAwaitingReview',
  z
    .object({
      ...postSummaryShape,
      review: z.looseObject({ state: z.string() }),
    })
    .strict(),
);

/** The awaiting-review list: at most 200 posts, newest first, no cursor. */
export const awaitingReviewListSchema = z.object({ data: z.array(postAwaitingReviewSchema) }).strict();
