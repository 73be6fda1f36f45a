import { WorkspaceScopedModel } from './scoped';

// Post analytics (spec 2.12; lib/analytics): the sync's state per published post and the daily
// gains per project it maintains.

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
