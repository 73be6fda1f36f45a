import { WorkspaceScopedModel } from './scoped';

export class Post extends WorkspaceScopedModel {
  static tableName = 'posts';
  static jsonAttributes = ['delivery', 'review', 'media'];

  declare id: string;
  declare workspace_id: string;
  declare project_id: string | null;
  declare status: string;
  declare status_id: string | null;
  declare title: string;
  declare title_auto: boolean;
  declare content: string;
  declare content_type: string;
  declare scheduled_at: Date | null;
  declare schedule_version: number;
  declare workflow_synced_version: number;
  declare published_at: Date | null;
  declare network_post_urn: string | null;
  declare funnel_stage: string | null;
  declare last_publish_error: string | null;
  declare last_publish_attempt_at: Date | null;
  declare delivery: Record<string, unknown> | null;
  declare review: Record<string, unknown> | null;
  declare media: unknown;
  declare auto_like: boolean;
  declare auto_comment: boolean;
  declare generation_job_id: string | null;
  declare created_at: Date;
  declare updated_at: Date | null;
  declare deleted_at: Date | null;
}
