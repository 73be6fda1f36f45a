import { errors } from '../../../lib/errors';
import { apiSpendOf, budgetTargetOf, percentUsed, periodsAt, wouldRefuse } from '../../../lib/spend/meters';
import { storageMeters } from '../../../lib/media/assets';
import { readUsageMeters } from './queries';
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
    const target = budgetTargetOf(project ?? null);
    // One statement: the target's and the pool's limits (either may have a budget of its own, set
    // by an operator in ai_budgets), their weeks, the spend day and the storage meters.
    const { limits, poolLimits, targetUsedCents, poolUsedCents, dayUsedCents, stored, storageLimits } = await readUsageMeters(
      auth.workspaceId,
      target,
      periods,
    );
    const budget = limits.weeklyBudgetCents;
    const blockedBy = wouldRefuse(limits, targetUsedCents, dayUsedCents);
    return {
      data: {
        plan: limits.plan,
        canGenerate: blockedBy === null,
        blockedBy,
        ai: {
          scope: target.scope,
          percentUsed: percentUsed(targetUsedCents, budget),
          unlimited: budget === null,
          enforcement: limits.enforcement,
          weekStart: periods.week,
          resetsAt: periods.weekResetsAt,
          // A company page has no budget of its own: its figures are the pool's.
          project: project
            ? { id: project.id, name: projectName(project), percentUsed: percentUsed(targetUsedCents, budget), unlimited: budget === null }
            : null,
          workspacePool: {
            percentUsed: percentUsed(poolUsedCents, poolLimits.weeklyBudgetCents),
            unlimited: poolLimits.weeklyBudgetCents === null,
          },
        },
        storage: storageMeters(stored, storageLimits),
        apiSpend: apiSpendOf(periods.day, limits.dailyCapCents, dayUsedCents),
      },
    };
  },
});
