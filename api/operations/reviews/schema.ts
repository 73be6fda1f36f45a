import { z } from 'zod';
import { boundedText, isoDateTime } from '../../validation';

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

// ---- outputs (GET /v1/reviews/awaiting; lib/presenters/reviews.ts) ------------------------------

export { awaitingReviewListSchema, postAwaitingReviewSchema } from '../../../lib/presenters/reviews';
