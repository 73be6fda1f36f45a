import { ROLE_LABELS } from '../../../lib/roles';
import { defineNoun } from '../registry';

const provision = () => import('../../../ops/provision');
const present = () => import('../present');

const ROLE_HELP = `Admin, Member, Client, or a legacy slug (${Object.keys(ROLE_LABELS).join(', ')})`;

export default defineNoun('member', 'Workspace membership and roles.', {
  add: {
    summary: 'Add a user to a workspace, or change the role of an existing member.',
    flags: {
      workspace: { required: true, value: 'org_x', help: 'workspace id' },
      user: { required: true, value: 'EMAIL|usr_x', help: 'the user, by email or id' },
      role: { required: true, value: 'ROLE', help: ROLE_HELP },
      project: { multiple: true, value: 'proj_x', help: 'narrow the member to these projects; given, it replaces any earlier assignment' },
    },
    examples: ['--workspace org_x --user ann@example.com --role Member --project proj_a --project proj_b'],
    async run(args) {
      const [{ addMember, getWorkspace, listMembers }, { memberView }] = await Promise.all([provision(), present()]);
      const workspaceId = args.need('workspace');
      // Checked here so a typo reads "no workspace org_…" rather than a foreign-key violation.
      await getWorkspace(workspaceId);
      const projectIds = args.list('project');
      const added = await addMember({ workspaceId, user: args.need('user'), role: args.need('role'), projectIds: projectIds.length ? projectIds : undefined });
      const member = (await listMembers(workspaceId)).find((m) => m.user_id === added.userId)!;
      return { workspaceId, ...memberView(member) };
    },
  },
  list: {
    summary: 'List the members of a workspace with their roles and assigned projects.',
    flags: { workspace: { required: true, value: 'org_x', help: 'workspace id' } },
    async run(args) {
      const [{ getWorkspace, listMembers }, { memberView }] = await Promise.all([provision(), present()]);
      const w = await getWorkspace(args.need('workspace'));
      return (await listMembers(w.id)).map(memberView);
    },
  },
});
