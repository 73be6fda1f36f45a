import type { Delivery } from '../posts/lifecycle';
import { WorkspaceScopedModel } from './scoped';

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
}
