import { WorkspaceScopedModel } from './scoped';

// The AI budget and spend tables (spec 2.16; lib/generation/spend.ts keeps the meters in them).

/** A target's own weekly budget: a project's id, or the workspace pool's key. */
export class AiBudget extends WorkspaceScopedModel {
  static tableName = 'ai_budgets';
  static idColumn = ['workspace_id', 'budget_key'];
  static projectColumn = null;

  declare workspace_id: string;
  declare budget_key: string;
  declare weekly_budget_cents: number;
  declare updated_at: Date;
}

/** What a budget target spent and holds reserved in one week. */
export class AiBudgetWeek extends WorkspaceScopedModel {
  static tableName = 'ai_budget_weeks';
  static idColumn = ['workspace_id', 'budget_key', 'week_start'];
  static projectColumn = null;

  declare workspace_id: string;
  declare budget_key: string;
  declare week_start: string;
  declare spent_cents: number;
  declare reserved_cents: number;
  declare updated_at: Date;
}

/** What a workspace spent and holds reserved through the API on one day (the daily cap). */
export class AiSpendDay extends WorkspaceScopedModel {
  static tableName = 'ai_spend_days';
  static idColumn = ['workspace_id', 'bucket_date'];
  static projectColumn = null;

  declare workspace_id: string;
  declare bucket_date: string;
  declare spent_cents: number;
  declare reserved_cents: number;
  declare updated_at: Date;
}
