import { defineNoun, flag } from '../registry';

// What GET /v1/usage answers a client (spec 2.16), through its operation as an admin of the
// workspace (admin/asOperator.ts): AI budget and enforcement, the daily API spend, and storage.

export default defineNoun('usage', 'Usage meters of a workspace (AI budget, AI spend, storage).', {
  show: {
    summary: "AI budget use, today's API AI spend and storage use against the limits in force, as GET /v1/usage shows them.",
    flags: {
      workspace: flag.workspace,
      project: { value: 'proj_x', help: "that project's AI budget (default: the workspace pool)" },
    },
    examples: ['--workspace org_x', '--workspace org_x --project proj_x'],
    async run(args) {
      const [{ operate }, { getUsage }] = await Promise.all([import('../../asOperator'), import('../../../api/operations/usage/usage')]);
      const workspaceId = args.need('workspace');
      return { workspaceId, ...(await operate<object>(workspaceId, getUsage, { projectId: args.string('project') })) };
    },
  },
});
