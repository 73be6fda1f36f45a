import { config } from '../../config';
import type { ImageJobInput } from '../../media/imageGenerator';
import { defineJobKind } from '../kind';

// IMAGE_GENERATION (docs/media.md "Image generation"): one image rendered or generated for a
// project; workflows/generateImage.ts, activities/imageGeneration.ts, api/operations/media/generations.ts.

export const imageGeneration = defineJobKind<ImageJobInput>()({
  type: 'IMAGE_GENERATION',
  workflow: 'generateImageWorkflow',
  label: 'image generation',
  reserveCents: () => config.images.reserveCents,
  describe: (job) => ({ kind: 'image', summary: `Generate an image for project ${job.project_id}` }),
});
