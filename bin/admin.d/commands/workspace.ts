import { PLAN_NAMES } from '../../../lib/config';
import { defineNoun, type Args } from '../registry';

const provision = () => import('../../../ops/provision');
const present = () => import('../present');

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
        name: args.need('name'), plan: args.need('plan'), features, requireReviewWorkflow: args.bool('require-review'),
        billingWorkspaceId: billing ?? null, aiEnforcement: args.string('ai-enforcement'),
      });
      return workspaceView(w, await billingPlanOf(w));
    },
  },
  'set-plan': {
    summary: 'Change the plan of a workspace (API processes pick it up on the next request).',
    flags: {
      workspace: { required: true, value: 'org_x', help: 'workspace id' },
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
    flags: { workspace: { required: true, value: 'org_x', help: 'workspace id' } },
    async run(args) {
      const [{ getWorkspace, listApiKeys, listMembers, listProjects }, { keyView, memberView, projectView, workspaceView }] = await Promise.all([provision(), present()]);
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
});
