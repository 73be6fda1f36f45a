import { approveReview, listAwaitingReview, rejectReview, requestReview } from '../../operations/reviews/reviews';
import { operationTool, READ, WRITE } from '../tool';

// Review before publishing (docs/review.md): the review operations as tools (spec 9.3 additions),
// the same operations as POST /v1/posts/{postId}/review[/approve|/reject] and GET /v1/reviews/awaiting.

export const requestReviewTool = operationTool(requestReview, {
  name: 'request_post_review',
  title: 'Request a review of a post',
  description:
    "Sends a post to review: reviewerUserId (a workspace member from the team list, Client role included; default the workspace's default reviewer, else any admin decides), optional deadline (ISO 8601; past it the review turns overdue and a reminder fires, nothing is auto-approved) and notes. A post off the schedule shows status waitingApproval. Answers conflict (review_pending) while a round awaits its decision. Requires posts:write.",
  annotations: WRITE,
  idempotent: true,
});

export const approvePostTool = operationTool(approveReview, {
  name: 'approve_post',
  title: 'Approve a post in review',
  description:
    "Approves the post's pending review round, with optional notes. Only the named reviewer (a Client-role reviewer included) may decide; the decision is final for the round. Requires posts:write.",
  annotations: { ...WRITE, idempotentHint: false },
  idempotent: true,
});

export const rejectPostTool = operationTool(rejectReview, {
  name: 'reject_post',
  title: 'Reject a post in review',
  description:
    "Rejects the post's pending review round, with optional notes saying what to change. Only the named reviewer may decide; the decision is final for the round (edit the post and request a new review). Requires posts:write.",
  annotations: { ...WRITE, idempotentHint: false },
  idempotent: true,
});

export const listAwaitingReviewTool = operationTool(listAwaitingReview, {
  name: 'list_posts_awaiting_review',
  title: 'List posts awaiting my review',
  description:
    "Posts whose review round awaits the caller's decision (for an API key: every pending round of the workspace), each with its review block. Requires posts:read.",
  annotations: { ...READ, idempotentHint: true },
});
