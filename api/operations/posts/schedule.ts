import { z } from 'zod';
import { defineOperation } from '../../operation';
import { single } from '../../output';
import { isoDateTime } from '../../validation';
import { postSchema } from './schema';
import { updatePost } from './posts';

// spec 4.9 schedule_post: "takes postId and scheduledFor". Its REST twin is
// PATCH /v1/posts/{postId} with only `scheduledFor` (spec 4.4), so the handler is that one:
// the same connection check, 409 conflict, slot, events and publish-workflow signal. Unlike the
// PATCH, `scheduledFor` is required and cannot be null (unscheduling is update_post's job).

export const schedulePostInput = z
  .object({
    postId: z.string().min(1).max(100),
    scheduledFor: isoDateTime,
  })
  .strict();

export const schedulePost = defineOperation({
  name: 'posts.schedule',
  summary: 'Schedule or reschedule a post for a future time (the scheduling path of the post update).',
  kind: 'write',
  scopes: { allOf: ['posts:write'] },
  clientRole: 'deny',
  input: schedulePostInput,
  output: single(postSchema),
  handler: (ctx, input) => updatePost.handler(ctx, { postId: input.postId, scheduledFor: input.scheduledFor }),
});
