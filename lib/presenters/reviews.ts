import { z } from 'zod';
import { objectComponent } from './output';
import { postSummaryShape } from './posts';

// docs/review.md: the posts awaiting a review decision (GET /v1/reviews/awaiting).

/** A post summary with its review block (open: the review round is a block still growing). */
export const postAwaitingReviewSchema = objectComponent('PostAwaitingReview', {
  ...postSummaryShape,
  review: z.looseObject({ state: z.string() }),
});

/** The awaiting-review list: at most 200 posts, newest first, no cursor. */
export const awaitingReviewListSchema = z.object({ data: z.array(postAwaitingReviewSchema) }).strict();
