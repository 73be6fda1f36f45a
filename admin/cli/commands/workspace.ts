import { PLAN_NAMES } from '../../../lib/config';
import { type Args, defineNoun, flag } from '../registry';

const provision = () => import('../../provision');
const present = () => import('../views');

const AI_ENFORCEMENT = ['off', 'shadow', 'warn', 'block'] as const;

/** `--feature name=true` (repeatable); a bare `--feature name` means true. */
function parseFeatures(args: Args): Record<string, boolean> {
  const features: Record<string, boolean> = {};
  for (const item of args.list('feature')) {
    const m = /^([A-Za-z][A-Za-z0-9_]*)(?:=(.*))?$/.exec(item);
    if (!m) throw args.usage(`--feature expects name=true or name=false (got "${item}")`);
    const raw = (m[2] ?? 'true').toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(raw)) features[m[1]!] = true;
    else if (['false', '0', 'no', 'off'].includes(raw)) features[m[1]!] = false;
    else throw args.usage(`--feature ${m[1]} must be true or false (got "${m[2]}")`);
  }
  return features;
}

async function billingPlanOf(w: { billing_workspace_id?: string | null }): Promise<string | null> {
  if (!w.billing_workspace_id) return null;
  const { db } = await import('../../../lib/db');
  const b = await db()('workspaces').where({ id: w.billing_workspace_id }).first('plan');
  return b?.plan ?? null;
}

export default defineNoun('workspace', 'Workspaces (organisations), their plan and settings.', {
  create: {
    summary: 'Create a workspace on a plan.',
    flags: {
      name: { required: true, value: 'NAME', help: 'display name' },
      plan: { required: true, value: 'PLAN', help: `one of ${PLAN_NAMES.join(', ')} (any case)` },
      feature: { multiple: true, value: 'name=true|false', help: 'override one plan feature flag' },
      'require-review': { type: 'boolean', help: 'turn on the review gate (requireReviewWorkflow)' },
      'billing-workspace': { value: 'org_x', help: 'agency workspace whose plan pays for this one' },
      'ai-enforcement': { choices: AI_ENFORCEMENT, help: 'AI budget enforcement (default block)' },
    },
    examples: ['--name Acme --plan BUSINESS --feature webhooks=false --require-review'],
    check: parseFeatures,
    async run(args) {
      const features = parseFeatures(args);
      const [{ createWorkspace, getWorkspace }, { workspaceView }] = await Promise.all([provision(), present()]);
      const billing = args.string('billing-workspace');
      // Checked here so a typo reads "no workspace org_…" rather than a foreign-key violation.
      if (billing) await getWorkspace(billing);
      const w = await createWorkspace({
        name: args.need('name'),
        plan: args.need('plan'),
        features,
        requireReviewWorkflow: args.bool('require-review'),
        billingWorkspaceId: billing ?? null,
        aiEnforcement: args.string('ai-enforcement'),
      });
      return workspaceView(w, await billingPlanOf(w));
    },
  },
  'set-plan': {
    summary: 'Change the plan of a workspace (API processes pick it up on the next request).',
    redis: true,
    flags: {
      workspace: flag.workspace,
      plan: { required: true, value: 'PLAN', help: `one of ${PLAN_NAMES.join(', ')} (any case)` },
    },
    async run(args) {
      const [{ setWorkspacePlan }, { workspaceView }] = await Promise.all([provision(), present()]);
      const w = await setWorkspacePlan(args.need('workspace'), args.need('plan'));
      return workspaceView(w, await billingPlanOf(w));
    },
  },
  list: {
    summary: 'List every workspace with its plan and counts.',
    async run() {
      const [{ listWorkspaces }, { workspaceView }] = await Promise.all([provision(), present()]);
      const rows = await listWorkspaces();
      const planById = new Map(rows.map((w: { id: string; plan: string }) => [w.id, w.plan]));
      return rows.map((w: Record<string, any>) => ({
        ...workspaceView(w, w.billing_workspace_id ? (planById.get(w.billing_workspace_id) ?? null) : null),
        projectCount: w.project_count as number,
        memberCount: w.member_count as number,
        activeKeyCount: w.active_key_count as number,
      }));
    },
  },
  show: {
    summary: 'One workspace with its members, projects and API keys (never key secrets).',
    flags: { workspace: flag.workspace },
    async run(args) {
      const [{ getWorkspace, listApiKeys, listMembers, listProjects }, { keyView, memberView, projectView, workspaceView }] =
        await Promise.all([provision(), present()]);
      const w = await getWorkspace(args.need('workspace'));
      const [members, projects, keys] = await Promise.all([listMembers(w.id), listProjects(w.id), listApiKeys(w.id)]);
      return {
        ...workspaceView(w, await billingPlanOf(w)),
        members: members.map(memberView),
        projects: projects.map(projectView),
        apiKeys: keys.map((k: Record<string, any>) => keyView(k)),
      };
    },
  },
  'set-ai-budget': {
    summary:
      'Set the workspace-wide weekly AI budget (each project and the pool, unless set with budget set) and its enforcement (spec 2.16).',
    flags: {
      workspace: flag.workspace,
      'weekly-cents': flag.cents('weekly budget in cents, per project and for the workspace pool'),
      'plan-default': { type: 'boolean', help: "use the plan's weekly budget again" },
      enforcement: { choices: AI_ENFORCEMENT, help: 'off, shadow (log only), warn (events), block (refuse at 100 %)' },
    },
    examples: ['--workspace org_x --weekly-cents 500 --enforcement block'],
    check(args) {
      if (args.has('weekly-cents') && args.bool('plan-default')) throw args.usage('give --weekly-cents or --plan-default, not both');
      if (!args.has('weekly-cents') && !args.bool('plan-default') && !args.has('enforcement'))
        throw args.usage('give --weekly-cents, --plan-default or --enforcement');
      args.limit('weekly-cents', { max: 2_000_000_000 });
    },
    async run(args) {
      const [{ setAiBudget }, { workspaceView }, { presentOverride }] = await Promise.all([
        import('../../controls'),
        present(),
        import('../../../lib/limits'),
      ]);
      const w = await setAiBudget({
        workspaceId: args.need('workspace'),
        enforcement: args.string('enforcement'),
        weeklyBudgetCents: args.bool('plan-default') ? null : args.limit('weekly-cents'),
      });
      return { ...workspaceView(w, await billingPlanOf(w)), weeklyAiBudgetCents: presentOverride(w.weekly_ai_budget_cents) };
    },
  },
  'set-spend-cap': {
    summary: "Set the workspace's daily API AI-spend cap (spec 2.16, 402 spend_cap_exceeded beyond it).",
    flags: {
      workspace: flag.workspace,
      'daily-cents': flag.cents('cap per UTC day in cents (0 refuses every generation)'),
      'plan-default': { type: 'boolean', help: "use the plan's cap again" },
    },
    check(args) {
      if (args.has('daily-cents') === args.bool('plan-default')) throw args.usage('give --daily-cents or --plan-default');
      args.limit('daily-cents', { max: 2_000_000_000 });
    },
    async run(args) {
      const [{ setSpendCap }, { workspaceView }, { presentOverride }] = await Promise.all([
        import('../../controls'),
        present(),
        import('../../../lib/limits'),
      ]);
      const w = await setSpendCap({
        workspaceId: args.need('workspace'),
        dailyCapCents: args.bool('plan-default') ? null : args.limit('daily-cents')!,
      });
      return { ...workspaceView(w, await billingPlanOf(w)), dailySpendCapCents: presentOverride(w.daily_spend_cap_cents) };
    },
  },
  'set-storage-limit': {
    summary: "Override the workspace's storage limits (bytes, asset count) or lift them; --plan-default restores the plan's.",
    flags: {
      workspace: flag.workspace,
      bytes: { value: 'BYTES|unlimited', help: 'total bytes of the media library' },
      assets: { value: 'N|unlimited', help: 'number of assets in the media library' },
      'plan-default': { type: 'boolean', help: "the plan's limits again (both)" },
    },
    examples: ['--workspace org_x --bytes 21474836480 --assets unlimited', '--workspace org_x --plan-default'],
    check(args) {
      const given = args.has('bytes') || args.has('assets');
      if (given === args.bool('plan-default')) throw args.usage('give --bytes and/or --assets, or --plan-default');
      args.limit('bytes', { max: Number.MAX_SAFE_INTEGER });
      args.limit('assets', { max: 2_000_000_000 });
    },
    async run(args) {
      const { setStorageLimits } = await import('../../controls');
      const reset = args.bool('plan-default');
      return setStorageLimits({
        workspaceId: args.need('workspace'),
        bytes: reset ? null : args.limit('bytes', { max: Number.MAX_SAFE_INTEGER }),
        assets: reset ? null : args.limit('assets', { max: 2_000_000_000 }),
      });
    },
  },
  'set-review': {
    summary: 'Turn the review gate (requireReviewWorkflow) on or off.',
    flags: {
      workspace: flag.workspace,
      required: { required: true, choices: ['on', 'off'], help: 'on: posts need review before they can be scheduled' },
    },
    async run(args) {
      const [{ setReviewGate }, { workspaceView }] = await Promise.all([import('../../controls'), present()]);
      const w = await setReviewGate({ workspaceId: args.need('workspace'), required: args.need('required') === 'on' });
      return workspaceView(w, await billingPlanOf(w));
    },
  },
  set: {
    summary: 'Change review settings: the review gate (requireReviewWorkflow) and the default reviewer (docs/review.md).',
    flags: {
      workspace: flag.workspace,
      'require-review': { choices: ['true', 'false'], help: 'true: posts need an approved review before they can be scheduled' },
      'default-reviewer': { value: 'user_x|none', help: 'member who reviews posts moved to the review category; none clears it' },
      'engagement-comment': {
        multiple: true,
        value: 'TEXT',
        help: 'a comment amplifiers may post (repeatable; replaces the list; "-" alone restores the built-in list)',
      },
    },
    examples: [
      '--workspace org_x --require-review true',
      '--workspace org_x --default-reviewer user_x',
      '--workspace org_x --engagement-comment "Well said." --engagement-comment "Worth a read."',
    ],
    check(args) {
      if (!args.has('require-review') && !args.has('default-reviewer') && !args.list('engagement-comment').length) {
        throw args.usage('give --require-review, --default-reviewer and/or --engagement-comment');
      }
    },
    async run(args) {
      const [{ setReviewGate, setDefaultReviewer }, { workspaceView }] = await Promise.all([import('../../controls'), present()]);
      const workspaceId = args.need('workspace');
      let w: Record<string, any> | undefined;
      if (args.has('require-review')) w = await setReviewGate({ workspaceId, required: args.string('require-review') === 'true' });
      if (args.has('default-reviewer')) {
        const reviewer = args.string('default-reviewer')!;
        w = await setDefaultReviewer({ workspaceId, userId: reviewer === 'none' ? null : reviewer });
      }
      const comments = args.list('engagement-comment');
      if (comments.length) {
        const { setEngagementComments } = await import('../../controls');
        w = await setEngagementComments({ workspaceId, comments: comments.length === 1 && comments[0] === '-' ? null : comments });
      }
      return {
        ...workspaceView(w!, await billingPlanOf(w!)),
        defaultReviewerUserId: (w!.default_reviewer_user_id as string | null) ?? null,
        engagementComments: (w!.engagement_comments as string[] | null) ?? null,
      };
    },
  },
});
