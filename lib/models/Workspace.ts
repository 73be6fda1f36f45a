import { type QueryBuilder, type TransactionOrKnex } from 'objection';
import { ServiceModel } from './base';

export class Workspace extends ServiceModel {
  static tableName = 'workspaces';
  static jsonAttributes = ['feature_overrides'];

  declare id: string;
  declare name: string;
  declare plan: string;
  declare feature_overrides: Record<string, unknown>;
  declare require_review_workflow: boolean;
  declare billing_workspace_id: string | null;
  declare ai_enforcement: string;
  declare weekly_ai_budget_cents: number | null;
  declare daily_spend_cap_cents: number | null;
  declare created_at: Date;
  declare updated_at: Date;

  /** The workspace itself is the scope: its row is read by its own id only. */
  static current(workspaceId: string, trx?: TransactionOrKnex): QueryBuilder<Workspace, Workspace | undefined> {
    return this.query(trx).findById(workspaceId);
  }
}
