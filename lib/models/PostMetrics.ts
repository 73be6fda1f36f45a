import { WorkspaceScopedModel } from './scoped';

// Post analytics (spec 2.12; lib/analytics): the sync's state per published post, the daily
// gains per project it maintains, and the published posts per hour the database keeps.

/** The latest figures of one published post and when the sync reads it next. */
export class PostMetricState extends WorkspaceScopedModel {
  static tableName = 'post_metric_state';
  static idColumn = 'post_id';

  declare post_id: string;
  declare workspace_id: string;
  declare project_id: string;
  declare network_post_urn: string;
  declare published_at: Date;
  declare impressions: string | number;
  declare reactions: string | number;
  declare comments: string | number;
  declare reshares: string | number;
  declare samples: number;
  declare sync_state: string;
  declare last_error: string | null;
  declare last_synced_at: Date | null;
  declare next_sync_at: Date | null;
  declare created_at: Date;
  /** The post's published_at while the overview counts it (published, in a project), else null; kept by triggers (migration 20261203120000). */
  declare counted_at: Date | null;
}

/** What all of a project's posts gained on one day of the project's timezone. */
export class PostMetricDay extends WorkspaceScopedModel {
  static tableName = 'post_metric_days';
  static idColumn = ['project_id', 'day'];

  declare project_id: string;
  declare day: string;
  declare workspace_id: string;
  declare impressions: string | number;
  declare reactions: string | number;
  declare comments: string | number;
  declare reshares: string | number;
}

/**
 * A project's posts published in one UTC hour (`hour`, its start) and the sums of their latest
 * metrics: what the overview's totals and posts per day read (lib/analytics/overview.ts). Kept by
 * triggers on posts and post_metric_state (migration 20261203120000), never written by the
 * service; an hour without posts has no row.
 */
export class PostPublishHour extends WorkspaceScopedModel {
  static tableName = 'post_publish_hours';
  static idColumn = ['workspace_id', 'project_id', 'hour'];

  declare workspace_id: string;
  declare project_id: string;
  declare hour: Date;
  declare posts: number;
  declare impressions: string | number;
  declare reactions: string | number;
  declare comments: string | number;
  declare reshares: string | number;
}
