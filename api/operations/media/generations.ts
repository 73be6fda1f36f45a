import { z } from 'zod';
import { config } from '../../../lib/config';
import { errors } from '../../../lib/errors';
import { Post } from '../../../lib/models';
import { presentJob } from '../../../lib/presenters/jobs';
import { answerWithJob, enqueueJob } from '../../../lib/jobs/queue';
import { IMAGE_STYLES, type ImageJobInput } from '../../../lib/media/imageGenerator';
import { defineOperation } from '../../operation';
import { requireProjectWithAiLimits } from '../projects/resolve';
import { jobSchema, SPEND_ERRORS } from '../jobs/schema';
import { single } from '../../output';
import { boundedText } from '../../validation';

// POST /v1/media/generations (docs/media.md "Image generation"; spec 1 lists image generation
// among the async jobs): the same job envelope, spend reservation, idempotency, progress and
// cancel-while-QUEUED as post generation (spec 2.12, 3.2, 4.4). Answers { data: Job } of type
// IMAGE_GENERATION; `result` is `{ assetId, key }` (and `postId` when attached).

export const createImageGenerationInput = z
  .object({
    projectId: z.string().min(1).max(100),
    postId: z.string().min(1).max(100).optional(),
    prompt: boundedText(4_000, 'prompt').pipe(z.string().trim().min(1)).optional(),
    style: z.enum(IMAGE_STYLES).optional(),
    wait_for_completion_ms: z.number().int().optional(),
  })
  .strict()
  .refine((b) => b.prompt !== undefined || b.postId !== undefined, {
    message: 'send `prompt`, `postId` (its opening line is drawn), or both.',
    path: ['prompt'],
  });

export const createImageGeneration = defineOperation({
  name: 'media.generate',
  summary: 'Queue an image generation job whose image becomes a media-library asset (attached to the post when postId is given).',
  kind: 'write',
  // Like post generation (spec 4.4): posts:write, or the narrower posts:generate grant.
  scopes: { anyOf: ['posts:write', 'posts:generate'] },
  clientRole: 'deny',
  input: createImageGenerationInput,
  output: single(jobSchema),
  errors: [...SPEND_ERRORS, 'temporarily_unavailable'],
  handler: async ({ auth }, input) => {
    // The project and the limits its reservation is checked against, in one statement.
    const { project, limits } = await requireProjectWithAiLimits(auth, input.projectId);
    if (input.postId !== undefined) {
      const post = await Post.forWorkspace(auth.workspaceId)
        .findById(input.postId)
        .whereNull('posts.deleted_at')
        .select('posts.project_id');
      if (!post) throw errors.notFound('post');
      // As a note of another project for post generation (spec 4.4): the body is at fault.
      if (post.project_id !== project.id)
        throw errors.unprocessable('`postId` must name a post of the same project.', { postId: input.postId, projectId: project.id });
    }
    const jobInput: ImageJobInput = {
      style: input.style ?? 'quote_card',
      ...(input.postId ? { postId: input.postId } : {}),
      ...(input.prompt ? { prompt: input.prompt } : {}),
    };
    const job = await enqueueJob({
      workspaceId: auth.workspaceId,
      createdBy: auth.principal.id,
      project,
      type: 'IMAGE_GENERATION',
      input: jobInput,
      estimatedMs: config.images.estimatedCompletionMs,
      limits,
    });
    return answerWithJob(job, input.wait_for_completion_ms, (row) => ({ data: presentJob(row) }));
  },
});
