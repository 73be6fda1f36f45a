import { WorkspaceScopedModel } from './scoped';

/** A board status of the workspace (spec 2.7 statusId / statusCategory, 3.1). */
export class PostStatus extends WorkspaceScopedModel {
  static tableName = 'post_statuses';
  static projectColumn = null;

  declare id: string;
  declare workspace_id: string;
  declare category: string;
  declare title: string;
  declare is_default: boolean;
  declare position: number;
  declare created_at: Date;
}
