import { db } from '../../../lib/db';
import { errors } from '../../../lib/errors';
import {
  apiSpendOf,
  budgetTargetOf,
  dayUsedCents,
  loadAiLimits,
  percentUsed,
  periodsAt,
  POOL_KEY,
  weekUsedCents,
  wouldRefuse,
  type BudgetTarget,
} from '../../../lib/spend/meters';
import { storageMeters, storageUsed, workspaceStorageLimits } from '../../../lib/media/assets';
import { single } from '../../output';
import { usageSchema, getUsageInput } from './schema';
import { defineOperation } from '../../operation';
import { projectName } from '../../../lib/presenters/projects';
import { findProject } from '../projects/queries';

// spec 2.16 / 4.8 GET /v1/usage. Read from the same rows and the same rule (wouldRefuse) that
// admit a generation, so `canGenerate` is false exactly when the next one would be refused.
// Without `projectId` the answer is about a job charged to the workspace pool.

export const getUsage = defineOperation({
  name: 'usage.get',
  summary: "AI budget, daily API AI-spend and storage meters; with projectId, that project's budget.",
  kind: 'read',
  scopes: { allOf: ['workspace:read'] },
  clientRole: 'deny',
  input: getUsageInput,
  output: single(usageSchema),
  handler: async ({ auth }, input) => {
    const project = input.projectId !== undefined ? await findProject(auth, input.projectId) : undefined;
    if (input.projectId !== undefined && !project) throw errors.notFound('project');
    const periods = periodsAt(new Date());
    const pool: BudgetTarget = { key: POOL_KEY, scope: 'ai_workspace_pool' };
    const target: BudgetTarget = project ? budgetTargetOf(project) : pool;
    // A project and the pool may have budgets of their own (ai_budgets, set by an operator).
    const [limits, poolLimits] = await Promise.all([
      loadAiLimits(db(), auth.workspaceId, target),
      target.key === POOL_KEY ? null : loadAiLimits(db(), auth.workspaceId, pool),
    ]);
    const [poolUsed, targetUsed, dayUsed, stored, storageLimits] = await Promise.all([
      weekUsedCents(db(), auth.workspaceId, POOL_KEY, periods.week),
      target.key === POOL_KEY ? null : weekUsedCents(db(), auth.workspaceId, target.key, periods.week),
      dayUsedCents(db(), auth.workspaceId, periods.day),
      // spec 2.16 storage: sums over the media library and the limits in force (lib/media/assets.ts).
      storageUsed(auth.workspaceId),
      workspaceStorageLimits(auth.workspaceId),
    ]);
    const governingUsed = targetUsed ?? poolUsed;
    const budget = limits.weeklyBudgetCents;
    const blockedBy = wouldRefuse(limits, governingUsed, dayUsed);
    return {
      data: {
        plan: limits.plan,
        canGenerate: blockedBy === null,
        blockedBy,
        ai: {
          scope: target.scope,
          percentUsed: percentUsed(governingUsed, budget),
          unlimited: budget === null,
          enforcement: limits.enforcement,
          weekStart: periods.week,
          resetsAt: periods.weekResetsAt,
          // A company page has no budget of its own: its figures are the pool's.
          project: project
            ? { id: project.id, name: projectName(project), percentUsed: percentUsed(governingUsed, budget), unlimited: budget === null }
            : null,
          workspacePool: {
            percentUsed: percentUsed(poolUsed, (poolLimits ?? limits).weeklyBudgetCents),
            unlimited: (poolLimits ?? limits).weeklyBudgetCents === null,
          },
        },
        storage: storageMeters(stored, storageLimits),
        apiSpend: apiSpendOf(periods.day, limits.dailyCapCents, dayUsed),
      },
    };
  },
});
