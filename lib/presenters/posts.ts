import { z } from 'zod';
import { isoOf } from '../db';
import { NOT_REQUESTED } from '../posts/review';
import { deliveryOf, funnelStageOf, PLATFORM, type PostRow, type PostSummaryRow } from '../posts/row';
import { dateTime, nullableDateTime, objectComponent } from './output';

// spec 2.7: the Post resource. Read endpoints return the fields marked R (the summary); create
// and update return the full set.

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

export const postSummarySchema = objectComponent('PostSummary', postSummaryShape);

// Blocks owned by workflows still growing (a post's `review` and `media`) stay open.
export const postSchema = objectComponent('Post', {
  ...postSummaryShape,
  statusCategory: z.string().nullable(),
  statusId: z.string().nullable(),
  statusTitle: z.string().nullable(),
  contentTruncated: z.boolean(),
  publishedAt: nullableDateTime,
  funnelStage: z.string(),
  lastPublishError: z.string().nullable(),
  lastPublishAttemptAt: nullableDateTime,
  delivery: z.object({ state: z.string(), willRetry: z.boolean(), retryUntil: nullableDateTime, detail: z.string().nullable() }).strict(),
  review: z.looseObject({ state: z.string(), awaitingDecision: z.boolean(), requiredByWorkspace: z.boolean() }),
  media: z.looseObject({ kind: z.string(), images: z.array(z.looseObject({ key: z.string() })) }),
  autoLike: z.boolean(),
  autoComment: z.boolean(),
});

/** The workspace's custom post statuses (GET /v1/post-statuses). */
export const postStatusSchema = objectComponent('PostStatus', {
  id: z.string(),
  title: z.string(),
  category: z.string(),
  isDefault: z.boolean(),
  position: z.number().int(),
  postCount: z.number().int(),
});

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

export function presentPostSummary(p: PostSummaryRow): PostSummary {
  return {
    id: p.id,
    projectId: p.project_id,
    status: p.status,
    platform: PLATFORM,
    contentType: p.content_type,
    title: p.title,
    content: p.content,
    scheduledAt: p.scheduled_at ? isoOf(p.scheduled_at) : null,
    createdAt: isoOf(p.created_at),
    updatedAt: p.updated_at ? isoOf(p.updated_at) : null,
  };
}

export function presentPost(p: PostRow): Post {
  const review = (p.review ?? {}) as Record<string, unknown>;
  return {
    ...presentPostSummary(p),
    statusCategory: p.status_category ?? null,
    statusId: p.status_id,
    statusTitle: p.status_title ?? null,
    contentTruncated: false,
    publishedAt: p.published_at?.toISOString() ?? null,
    funnelStage: p.funnel_stage ?? funnelStageOf(p.content_type),
    lastPublishError: p.last_publish_error,
    lastPublishAttemptAt: p.last_publish_attempt_at?.toISOString() ?? null,
    delivery: deliveryOf(p),
    review: { ...NOT_REQUESTED, ...review, requiredByWorkspace: p.require_review_workflow ?? false },
    media: { kind: 'images', images: [], ...(p.media ?? {}) },
    autoLike: p.auto_like,
    autoComment: p.auto_comment,
  };
}
