import { z } from 'zod';
import { config } from '../../../lib/config';
import { db } from '../../../lib/db';
import { ApiError, errors } from '../../../lib/errors';
import { JOB_COLUMNS, presentJob, progressNow, TERMINAL_STATUSES, type JobRow } from '../../../lib/generation/jobs';
import { budgetTargetOf, loadAiLimits, reservationFor, reserveGenerationSpend, settleJobSpend } from '../../../lib/generation/spend';
import { newId } from '../../../lib/ids';
import { log } from '../../../lib/logger';
import { IMAGE_STYLES, type ImageJobInput } from '../../../lib/media/imageGenerator';
import { startImageWorkflow } from '../../../lib/media/imageJobs';
import { defineOperation } from '../../operation';
import { boundedText } from '../../validation';
import { findProject } from '../projects/present';

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const createImageGeneration = defineOperation({
  name: 'media.generate',
  summary: 'Queue an image generation job whose image becomes a media-library asset (attached to the post when postId is given).',
  kind: 'write',
  // Like post generation (spec 4.4): posts:write, or the narrower posts:generate grant.
  scopes: { anyOf: ['posts:write', 'posts:generate'] },
  clientRole: 'deny',
  inputSource: 'body',
  input: createImageGenerationInput,
  handler: async ({ auth }, input) => {
    const project = await findProject(auth, input.projectId);
    if (!project) throw errors.notFound('project');
    if (input.postId !== undefined) {
      const post = await db()('posts')
        .where({ workspace_id: auth.workspaceId, id: input.postId })
        .whereNull('deleted_at')
        .first('project_id');
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
    const now = new Date();
    const target = budgetTargetOf(project);
    const limits = await loadAiLimits(db(), auth.workspaceId);
    const reservation = reservationFor(target, now);
    const job = await db().transaction(async (trx) => {
      const [row] = await trx('jobs')
        .insert({
          id: newId('job'),
          workspace_id: auth.workspaceId,
          project_id: project.id,
          type: 'IMAGE_GENERATION',
          status: 'QUEUED',
          input: JSON.stringify(jobInput),
          progress: JSON.stringify(progressNow(0, 'Waiting for a worker', now)),
          estimated_completion_ms: config.images.estimatedCompletionMs,
          created_by: auth.principal.id,
          reserved_cents: reservation.reservedCents,
          spend_day: reservation.spendDay,
          budget_key: reservation.budgetKey,
          budget_week: reservation.budgetWeek,
        })
        .returning(JOB_COLUMNS.map((c) => c.slice('jobs.'.length)));
      await reserveGenerationSpend(trx, { workspaceId: auth.workspaceId, target, projectId: project.id, limits, reservation, now });
      return row as JobRow;
    });
    try {
      await startImageWorkflow({ id: job.id, workspace_id: job.workspace_id, project_id: project.id });
    } catch (err) {
      // Not started: withdraw a still-QUEUED job and its reservation so a retry starts clean.
      const withdrawn = await db().transaction(async (trx) => {
        const row = await trx('jobs').where({ id: job.id, status: 'QUEUED' }).forUpdate().first('id');
        if (!row) return false;
        await settleJobSpend(trx, job.id);
        await trx('jobs').where({ id: job.id }).delete();
        return true;
      });
      if (withdrawn) {
        log.error('image generation workflow could not be started; job withdrawn', { jobId: job.id, err });
        throw new ApiError(
          503,
          'temporarily_unavailable',
          'The job queue is unreachable right now; nothing was queued and no spend was reserved. Retry shortly.',
          undefined,
          { 'Retry-After': '5' },
        );
      }
    }
    const waitMs = Math.min(Math.max(input.wait_for_completion_ms ?? 0, 0), config.limits.waitForCompletionMaxMs);
    let current = job;
    const deadline = Date.now() + waitMs;
    while (waitMs > 0 && !TERMINAL_STATUSES.includes(current.status) && Date.now() < deadline) {
      await sleep(Math.min(200, Math.max(0, deadline - Date.now())));
      current = (await db()('jobs').where({ id: job.id }).first(JOB_COLUMNS)) as JobRow;
    }
    return { data: presentJob(current) };
  },
});
