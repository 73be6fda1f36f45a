import { z } from 'zod';
import { config } from '../../../lib/config';
import { LEGACY_STATUSES, STATUS_CATEGORIES } from '../../../lib/posts/statuses';
import { paginationInput } from '../../pagination';
import { boundedText, CONTENT_TYPES, isoDate, isoDateTime } from '../../validation';
import { component, dateTime, nullableDateTime } from '../../output';

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

// ---- outputs (spec 2.7) --------------------------------------------------------------------------

export const postSummaryShape = {
  id: z.string().describe('post_*'),
  projectId: z.string().nullable(),
  status: z.string().describe('Legacy status enum (spec 3.1).'),
  platform: z.string(),
  contentType: z.string(),
  title: z.string(),
  content: z.string(),
  scheduledAt: nullableDateTime,
  createdAt: dateTime,
  updatedAt: nullableDateTime,
};

export const postSummarySchema = component('PostSummary', z.object(postSummaryShape).strict());

// Blocks owned by workflows still growing (a post's `review` and `media`) stay open.
export const postSchema = component(
  'Post',
  z
    .object({
      ...postSummaryShape,
      statusCategory: z.string().nullable(),
      statusId: z.string().nullable(),
      statusTitle: z.string().nullable(),
      contentTruncated: z.boolean(),
      publishedAt: nullableDateTime,
      funnelStage: z.string(),
      lastPublishError: z.string().nullable(),
      lastPublishAttemptAt: nullableDateTime,
      delivery: z
        .object({ state: z.string(), willRetry: z.boolean(), retryUntil: nullableDateTime, detail: z.string().nullable() })
        .strict(),
      review: z.looseObject({ state: z.string(), awaitingDecision: z.boolean(), requiredByWorkspace: z.boolean() }),
      media: z.looseObject({ kind: z.string(), images: z.array(z.looseObject({ key: z.string() })) }),
      autoLike: z.boolean(),
      autoComment: z.boolean(),
    })
    .strict(),
);

/** The workspace's custom post statuses (GET /v1/post-statuses). */
export const postStatusSchema = component(
  'PostStatus',
  z
    .object({
      id: z.string(),
      title: z.string(),
      category: z.string(),
      isDefault: z.boolean(),
      position: z.number().int(),
      postCount: z.number().int(),
    })
    .strict(),
);

/** spec 3.1 / 4.9 delete_post: what a delete does to the schedule, the network copy and analytics. */
const deletionEffectsShape = {
  cancelsScheduledPublish: z.boolean(),
  networkCopy: z.enum(['stays_live', 'none']).describe('spec 3.1: a published post stays live on the network'),
  analyticsHistoryKept: z.boolean(),
};

/** delete_post: phase 1 previews the delete and mints its confirmation; phase 2 answers the delete. */
export const postDeletionSchema = z
  .object({
    data: z.union([
      z
        .object({
          post: postSchema,
          wouldDelete: z.literal(true),
          ...deletionEffectsShape,
          confirmationToken: z.string(),
          confirmationExpiresAt: dateTime,
        })
        .strict(),
      z
        .object({
          id: z.string(),
          deleted: z.literal(true),
          deletedAt: dateTime,
          statusAtDeletion: z.string(),
          ...deletionEffectsShape,
        })
        .strict(),
    ]),
  })
  .strict();

export type PostSummary = z.infer<typeof postSummarySchema>;
export type Post = z.infer<typeof postSchema>;
