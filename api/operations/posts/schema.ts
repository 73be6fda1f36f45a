import { z } from 'zod';
import { config } from '../../../lib/config';
import { LEGACY_STATUSES, STATUS_CATEGORIES } from '../../../lib/posts/statuses';
import { paginationInput } from '../../pagination';
import { boundedText, CONTENT_TYPES, isoDate, isoDateTime } from '../../validation';

const id = z.string().min(1).max(100);

export const listPostsInput = z
  .object({
    projectId: z.string({ error: '`projectId` is required.' }).min(1).max(100),
    status: z
      .string()
      .max(500)
      .optional()
      .refine((s) => s === undefined || s.split(',').every((v) => (LEGACY_STATUSES as readonly string[]).includes(v.trim())), {
        message: `unknown status; use a comma-separated list of ${LEGACY_STATUSES.join(', ')}`,
      }),
    dateFrom: isoDate.optional(),
    dateTo: isoDate.optional(),
    ...paginationInput,
  })
  .strict();

export const getPostInput = z.object({ postId: id }).strict();

export const createPostInput = z
  .object({
    projectId: id,
    content: boundedText(config.limits.contentChars, 'content').optional(),
    title: boundedText(config.limits.titleChars, 'title').optional(),
    contentType: z.enum(CONTENT_TYPES).optional(),
    scheduledFor: isoDateTime.optional(),
  })
  .strict();

export const updatePostInput = z
  .object({
    postId: id,
    content: boundedText(config.limits.contentChars, 'content').optional(),
    title: boundedText(config.limits.titleChars, 'title').optional(),
    contentType: z.enum(CONTENT_TYPES).optional(),
    statusCategory: z.enum(STATUS_CATEGORIES).optional(),
    statusId: id.optional(),
    scheduledFor: isoDateTime.nullable().optional(),
    autoLike: z.boolean().optional(),
    autoComment: z.boolean().optional(),
  })
  .strict()
  .refine((b) => !(b.statusCategory !== undefined && b.statusId !== undefined), {
    message: '`statusCategory` and `statusId` are mutually exclusive.',
    path: ['statusId'],
  });

export type CreatePostInput = z.infer<typeof createPostInput>;
export type UpdatePostInput = z.infer<typeof updatePostInput>;

// ---- outputs (spec 2.7; lib/presenters/posts.ts) -------------------------------------------------

export {
  postDeletionSchema,
  postSchema,
  postStatusSchema,
  postSummarySchema,
  type Post,
  type PostSummary,
} from '../../../lib/presenters/posts';

export const listPostStatusesInput = z.object({}).strict();
