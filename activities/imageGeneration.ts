import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { config } from '../lib/config';
import { ApiError } from '../lib/errors';
import { finishingJob, finishJob } from '../lib/jobs/finish';
import { progressNow, type JobStatus } from '../lib/jobs/row';
import { importAsset } from '../lib/media/assets';
import type { ImageGenerator, ImageJobInput } from '../lib/media/imageGenerator';
import { Post } from '../lib/models';
import { imagesOf } from '../lib/posts/media';
import { loadPostForUpdate, setPostMedia } from '../lib/posts/write';
import type { ObjectStore } from '../lib/storage/objectStore';
import { chargeJob, codedFailure, loadRunningJob, lockJob, startQueuedJob, type StartOutcome } from './jobRows';

// Activities of image generation jobs (docs/media.md "Image generation"; the job envelope of
// spec 2.12 / 3.2 shared with post generation). Each row transition locks the job row and checks
// its status first, so a retry after a lost answer finds its own work done; the image itself is
// imported by content (SHA-256), so a retried render lands on the same asset.

export interface ImageGenerationDeps {
  db: Knex;
  images: ImageGenerator;
  store: () => ObjectStore;
}
export type ImageStartOutcome = StartOutcome;

/** The opening line of a post: what a quote card of it shows. */
export function hookOf(content: string): string {
  return (
    content
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? ''
  );
}

export function createImageGenerationActivities({ db, images, store }: ImageGenerationDeps) {
  return {
    async startImageJob(jobId: string): Promise<ImageStartOutcome> {
      return startQueuedJob(db, jobId, 0.1, 'Drawing the image');
    },

    /** Draws (or asks the images API for) the image and imports it into the library. */
    async renderJobImage(jobId: string): Promise<{ assetId: string; key: string }> {
      const { attempt } = Context.current().info;
      const job = await loadRunningJob(db, jobId, ['j.workspace_id', 'j.project_id']);
      await db('jobs')
        .where({ id: jobId })
        .update({ attempt_count: attempt, updated_at: db.fn.now(), progress: JSON.stringify(progressNow(0.3, 'Drawing the image')) });
      const input = job.input as ImageJobInput;
      let text = input.prompt ?? '';
      if (!text && input.postId) {
        const post = await Post.forWorkspace(job.workspace_id, db).findById(input.postId).select('content');
        text = post ? hookOf(post.content) : '';
      }
      let image;
      try {
        image = await images.generate(
          { text, style: input.style, projectId: job.project_id, projectName: job.display_name || job.slug || null },
          Context.current().cancellationSignal,
        );
      } catch (err) {
        throw codedFailure(err, attempt);
      }
      // Charged per attempt, as the provider bills each one (settled once the job is final: finishingJob).
      await chargeJob(db, jobId, image.costCents);
      await db('jobs')
        .where({ id: jobId })
        .update({ progress: JSON.stringify(progressNow(0.7, 'Saving the image to the media library')), updated_at: db.fn.now() });
      try {
        const { asset } = await importAsset(
          {
            workspaceId: job.workspace_id,
            projectId: job.project_id,
            bytes: image.bytes,
            declaredType: null,
            fileName: `generated-${jobId}.png`,
            alt: text.slice(0, config.media.altChars),
            title: 'Generated image',
          },
          store(),
        );
        return { assetId: asset.id, key: asset.key };
      } catch (err) {
        // A full library (402) or bytes that are no image cannot get better by retrying.
        if (err instanceof ApiError) throw ApplicationFailure.nonRetryable(err.message, err.code);
        throw err;
      }
    },

    /** DONE with `{ assetId, key }`, attaching the image to the post when the job names one, in one transaction. */
    async completeImageJob(input: { jobId: string; assetId: string; key: string }): Promise<{ status: JobStatus | 'MISSING' }> {
      return finishingJob(db, input.jobId, async (trx) => {
        const job = await lockJob(trx, input.jobId);
        if (!job) return { status: 'MISSING' };
        if (job.status !== 'RUNNING') return { status: job.status };
        const jobInput = job.input as ImageJobInput;
        const result: Record<string, unknown> = { assetId: input.assetId, key: input.key };
        if (jobInput.postId) {
          const post = await loadPostForUpdate(trx, job.workspace_id, jobInput.postId, true);
          const current = post ? imagesOf(post) : [];
          if (post && !current.some((i) => i.key === input.key) && current.length < config.media.maxImagesPerPost) {
            const asset = await trx('media_assets').where({ id: input.assetId }).first('alt', 'title');
            await setPostMedia(trx, post, [...current, { key: input.key, alt: asset?.alt ?? '', name: asset?.title ?? '' }]);
            result.postId = post.id;
          } else if (post && current.some((i) => i.key === input.key)) result.postId = post.id;
        }
        await finishJob(trx, job.id, { status: 'DONE', progress: progressNow(1, 'Done'), result });
        return { status: 'DONE' };
      });
    },
  };
}

export type ImageGenerationActivities = ReturnType<typeof createImageGenerationActivities>;
