import { WorkspaceScopedModel } from './scoped';

/** A user's membership of a workspace, with its role (spec 2.15, 5.4, 5.5). */
export class Membership extends WorkspaceScopedModel {
  static tableName = 'memberships';
  static projectColumn = null;

  declare id: string;
  declare workspace_id: string;
  declare user_id: string;
  declare role: string;
  declare created_at: Date;
}
