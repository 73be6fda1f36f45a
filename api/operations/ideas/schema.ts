import { z } from 'zod';
import { config } from '../../../lib/config';
import { IDEA_STATUSES, WRITABLE_IDEA_STATUSES } from '../../../lib/ideas/ideas';
import { paginationInput } from '../../pagination';
import { boundedText, isoDate } from '../../validation';

// Inputs of the idea operations (spec 4.6 and the 9.3 additions), with their inferred types.

const briefField = (max: number) => z.string().max(max).nullable().optional();
const projectIdInput = z.string().min(1).max(100).optional();
const ideaIdInput = z.string().min(1).max(100);

/** The fields create and update share; every one optional (create requires only `title`). */
const ideaFields = {
  projectId: projectIdInput,
  content: boundedText(config.limits.contentChars, 'content').optional(),
  pillar: briefField(200),
  postType: briefField(200),
  assetFormat: briefField(200),
  hook: briefField(1000),
  topic: briefField(500),
  scheduledFor: isoDate.nullable().optional(),
  status: z
    .enum(WRITABLE_IDEA_STATUSES, {
      error: '`status` can be written as `inbox` or `in_production` only; `review` and `done` follow the linked post.',
    })
    .optional(),
  linkedPostId: z.string().min(1).max(100).nullable().optional(),
};

/** Input field → column of the brief fields. */
export const BRIEF_COLUMNS = {
  pillar: 'pillar',
  postType: 'post_type',
  assetFormat: 'asset_format',
  hook: 'hook',
  topic: 'topic',
} as const;

export const UPDATABLE = [
  'title',
  'content',
  'pillar',
  'postType',
  'assetFormat',
  'hook',
  'topic',
  'status',
  'scheduledFor',
  'linkedPostId',
] as const;

export const createIdeaInput = z
  .object({
    ...ideaFields,
    title: boundedText(config.limits.titleChars, 'title').refine((s) => s.trim().length > 0, '`title` must not be empty.'),
  })
  .strict();

export const listIdeasInput = z
  .object({
    projectId: projectIdInput,
    status: z
      .string()
      .max(200)
      .refine(
        (s) => s.split(',').every((x) => (IDEA_STATUSES as readonly string[]).includes(x.trim())),
        `must be a comma-separated list of ${IDEA_STATUSES.join(', ')}`,
      )
      .optional(),
    ...paginationInput,
  })
  .strict();

export const getIdeaInput = z.object({ ideaId: ideaIdInput }).strict();

export const updateIdeaInput = z
  .object({ ideaId: ideaIdInput, ...ideaFields, title: boundedText(config.limits.titleChars, 'title').optional() })
  .strict()
  .refine((b) => UPDATABLE.some((k) => b[k] !== undefined), {
    message: `at least one updatable field is required (${UPDATABLE.join(', ')})`,
  });

export type CreateIdeaInput = z.infer<typeof createIdeaInput>;
export type ListIdeasInput = z.infer<typeof listIdeasInput>;
export type GetIdeaInput = z.infer<typeof getIdeaInput>;
export type UpdateIdeaInput = z.infer<typeof updateIdeaInput>;

// ---- output (spec 2.9; lib/presenters/ideas.ts)

export { ideaSchema, type Idea } from '../../../lib/presenters/ideas';
