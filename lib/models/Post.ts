import type { AnyQueryBuilder, QueryBuilder, TransactionOrKnex } from 'objection';
import type { Delivery } from '../posts/lifecycle';
import { PostStatus } from './PostStatus';
import { WorkspaceScopedModel, type Reach } from './scoped';

/**
 * spec 5.4: the client view, posts in review, scheduled or published. A post is in it by its
 * board category (a board move only relabels the post, spec 3.1, so a post moved to the review
 * column keeps its legacy status) or by its legacy status. "In review" includes the outcome of a
 * review round (`approved`, `rejected`, docs/review.md), so a client reviewer still sees the post
 * it just decided.
 */
export const CLIENT_VIEW = {
  categories: ['review', 'scheduled', 'published'],
  statuses: ['waitingApproval', 'approved', 'rejected', 'scheduled', 'published'],
} as const;

/** The columns of `posts` (spec 2.7), the one row shape every post type derives from. */
export interface PostColumns {
  id: string;
  workspace_id: string;
  project_id: string | null;
  /** The lifecycle status (spec 3.1, lib/posts/lifecycle.ts). */
  status: string;
  /** The board status (post_statuses), a label apart from the lifecycle. */
  status_id: string | null;
  title: string;
  title_auto: boolean;
  content: string;
  content_type: string;
  scheduled_at: Date | null;
  schedule_version: number;
  /** The schedule version the publish workflow has heard of (docs/publishing.md). */
  workflow_synced_version: number;
  published_at: Date | null;
  network_post_urn: string | null;
  funnel_stage: string | null;
  last_publish_error: string | null;
  last_publish_attempt_at: Date | null;
  delivery: Partial<Delivery> | null;
  review: Record<string, unknown> | null;
  media: Record<string, unknown> | null;
  auto_like: boolean;
  auto_comment: boolean;
  generation_job_id: string | null;
  /** The current review round (0: none requested; docs/review.md). */
  review_round: number;
  review_synced_round: number;
  created_at: Date;
  updated_at: Date | null;
  deleted_at: Date | null;
}

// Column properties come from the interface of the same name, as in ./Project.ts.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface Post extends PostColumns {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class Post extends WorkspaceScopedModel {
  static tableName = 'posts';
  static jsonAttributes = ['delivery', 'review', 'media'];

  /** The posts a reader reads: `visibleTo`, and for a Client-role reader only the client view (spec 5.4). */
  static readableBy(reader: Reach & { role: string }, trx?: TransactionOrKnex): QueryBuilder<Post> {
    const q = Post.visibleTo(reader, trx);
    if (reader.role === 'client') q.where(Post.inClientView(reader.workspaceId));
    return q;
  }

  /** The client view's condition (CLIENT_VIEW) on the posts of a query that reads them as `table`, for `.where()`. */
  static inClientView(workspaceId: string, table = 'posts') {
    return (q: AnyQueryBuilder) =>
      q.whereIn(`${table}.status`, [...CLIENT_VIEW.statuses]).orWhereIn(
        `${table}.status_id`,
        PostStatus.forWorkspace(workspaceId)
          .whereIn('post_statuses.category', [...CLIENT_VIEW.categories])
          .select('post_statuses.id'),
      );
  }
}
