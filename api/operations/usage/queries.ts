import type { Knex } from 'knex';
import { db, readPrepared, shapedRead } from '../../../lib/db';
import { STORAGE_LIMIT_COLUMNS, storageLimitsOf, storageUsedOf, type StorageLimits } from '../../../lib/media/assets';
import { AiBudgetWeek, AiSpendDay, WorkspaceStorage } from '../../../lib/models';
import {
  aiLimitColumns,
  aiLimitsOf,
  POOL_KEY,
  usedCentsOf,
  type AiLimits,
  type BudgetTarget,
  type Periods,
} from '../../../lib/spend/meters';

// GET /v1/usage's meters in one statement: the workspace row (its plan, its billing workspace's,
// its overrides), the budgets of the target and of the pool (`ai_budgets`), their weeks, the
// spend day and the storage meters. Each part is read from the columns and turned into figures by
// the function its own read uses (lib/spend/meters.ts, lib/media/assets.ts), so this read and the
// ones an AI job or an import reserves against cannot disagree.

export interface UsageMeters {
  /** The target's limits (its weekly budget is the target's own, else the workspace's, else the plan's). */
  limits: AiLimits;
  /** The pool's limits, as a job of no project or of a company page reserves against. */
  poolLimits: AiLimits;
  targetUsedCents: number;
  poolUsedCents: number;
  dayUsedCents: number;
  stored: { usedBytes: number; usedAssets: number };
  storageLimits: StorageLimits;
}

/** The workspace's meters for `target` (the pool, or a project), in the week and day of `periods`. */
export async function readUsageMeters(workspaceId: string, target: BudgetTarget, periods: Periods): Promise<UsageMeters> {
  const [row] = await readPrepared<Record<string, any>>(
    usageRead(null, { workspaceId, targetKey: target.key, poolKey: POOL_KEY, week: periods.week, day: periods.day }),
  );
  if (!row) throw new Error(`workspace ${workspaceId} does not exist`);
  const used = (prefix: string) =>
    usedCentsOf({ spent_cents: row[`${prefix}_spent_cents`], reserved_cents: row[`${prefix}_reserved_cents`] });
  return {
    limits: aiLimitsOf(row),
    poolLimits: aiLimitsOf({ ...row, target_budget_cents: row.pool_budget_cents }),
    targetUsedCents: used('target_week'),
    poolUsedCents: used('pool_week'),
    dayUsedCents: used('day'),
    stored: storageUsedOf(row),
    storageLimits: storageLimitsOf(row as Parameters<typeof storageLimitsOf>[0]),
  };
}

type UsageParam = 'workspaceId' | 'targetKey' | 'poolKey' | 'week' | 'day';

/** A workspace's row of a table joined to the workspace `w`: its `workspace_id`, and its other key columns' values. */
const keyed = (alias: string, key: Record<string, string>) => (j: Knex.JoinClause) => {
  j.on(`${alias}.workspace_id`, 'w.id');
  for (const [column, value] of Object.entries(key)) j.andOn(`${alias}.${column}`, db().raw('?', [value]));
};

const usageRead = shapedRead((_shape: null, param: (name: UsageParam) => string) =>
  db()('workspaces as w')
    .leftJoin('workspaces as b', 'b.id', 'w.billing_workspace_id')
    .leftJoin('ai_budgets as ab', keyed('ab', { budget_key: param('targetKey') }))
    .leftJoin('ai_budgets as pb', keyed('pb', { budget_key: param('poolKey') }))
    .leftJoin(`${AiBudgetWeek.tableName} as tw`, keyed('tw', { budget_key: param('targetKey'), week_start: param('week') }))
    .leftJoin(`${AiBudgetWeek.tableName} as pw`, keyed('pw', { budget_key: param('poolKey'), week_start: param('week') }))
    .leftJoin(`${AiSpendDay.tableName} as d`, keyed('d', { bucket_date: param('day') }))
    .leftJoin(`${WorkspaceStorage.tableName} as s`, keyed('s', {}))
    .where('w.id', param('workspaceId'))
    .first(
      ...aiLimitColumns(),
      'pb.weekly_budget_cents as pool_budget_cents',
      'tw.spent_cents as target_week_spent_cents',
      'tw.reserved_cents as target_week_reserved_cents',
      'pw.spent_cents as pool_week_spent_cents',
      'pw.reserved_cents as pool_week_reserved_cents',
      'd.spent_cents as day_spent_cents',
      'd.reserved_cents as day_reserved_cents',
      's.used_bytes',
      's.used_assets',
      ...STORAGE_LIMIT_COLUMNS,
    ),
);
