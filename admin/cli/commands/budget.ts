import { defineNoun, flag } from '../registry';

// Weekly AI budgets per target (spec 2.16): each personal-brand or amplifier project, and the
// workspace pool company pages draw on. The workspace-wide default and the enforcement mode are
// set with `workspace set-ai-budget`, the daily API cap with `workspace set-spend-cap`.

export default defineNoun('budget', 'Weekly AI budgets of projects and of the workspace pool.', {
  set: {
    summary: 'Set (or with --clear remove) the weekly AI budget of one project or of the workspace pool.',
    flags: {
      workspace: flag.workspace,
      project: { value: 'proj_x', help: 'a personal-brand or amplifier project' },
      pool: { type: 'boolean', help: 'the workspace pool (company pages)' },
      'weekly-cents': flag.cents('budget per week (Monday 00:00 UTC) in cents'),
      clear: { type: 'boolean', help: "remove the target's own budget: it has the workspace's (or the plan's) again" },
    },
    examples: ['--workspace org_x --project proj_x --weekly-cents 300', '--workspace org_x --pool --weekly-cents 1000'],
    check(args) {
      if (args.has('project') === args.bool('pool')) throw args.usage('give --project proj_x or --pool');
      if (args.has('weekly-cents') === args.bool('clear')) throw args.usage('give --weekly-cents CENTS or --clear');
      args.limit('weekly-cents', { max: 2_000_000_000 });
    },
    async run(args) {
      const { setTargetBudget } = await import('../../controls');
      return setTargetBudget({
        workspaceId: args.need('workspace'),
        projectId: args.string('project'),
        weeklyBudgetCents: args.bool('clear') ? null : args.limit('weekly-cents')!,
      });
    },
  },
  show: {
    summary: "The budget settings of a workspace and, per target, the budget in force and this week's use.",
    flags: { workspace: flag.workspace },
    async run(args) {
      const { budgets } = await import('../../controls');
      return budgets(args.need('workspace'));
    },
  },
});
