import { ROLE_LABELS } from '../../../lib/roles';
import { defineNoun, flag } from '../registry';

const provision = () => import('../../provision');
const present = () => import('../views');

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  stream.setEncoding('utf8');
  for await (const chunk of stream) text += chunk;
  return text;
}

const ROLE_HELP = `Admin, Member, Client, or a legacy slug (${Object.keys(ROLE_LABELS).join(', ')})`;

export default defineNoun('member', 'Workspace membership and roles.', {
  add: {
    summary: 'Add a user to a workspace, or change the role of an existing member.',
    flags: {
      workspace: flag.workspace,
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
      const added = await addMember({
        workspaceId,
        user: args.need('user'),
        role: args.need('role'),
        projectIds: projectIds.length ? projectIds : undefined,
      });
      const member = (await listMembers(workspaceId)).find((m) => m.user_id === added.userId)!;
      return { workspaceId, ...memberView(member) };
    },
  },
  remove: {
    summary: 'Remove a user from a workspace (their OAuth reach there ends within a minute; API keys are unaffected).',
    flags: {
      workspace: flag.workspace,
      user: { required: true, value: 'EMAIL|usr_x', help: 'the member, by email or id' },
    },
    async run(args) {
      const { removeMember } = await import('../../controls');
      return removeMember({ workspaceId: args.need('workspace'), user: args.need('user') });
    },
  },
  'add-many': {
    summary: 'Add many members at once: --count N generated users, or a roster file of email[,role[,name]] lines (- for stdin).',
    flags: {
      workspace: flag.workspace,
      count: flag.count('create N new users member-<n>-<random>@<domain> (1 to 10000)'),
      file: { value: 'PATH', help: 'roster file, one email[,role[,name]] per line; existing users are reused' },
      role: { value: 'ROLE', help: `role when a line names none, and for --count (default Member); ${ROLE_HELP}` },
      domain: { value: 'DOMAIN', help: 'with --count: email domain (default example.com)' },
    },
    examples: ['--workspace org_x --count 100 --role Member', '--workspace org_x --file roster.csv'],
    check(args) {
      if (args.has('count') === args.has('file')) throw args.usage('give --count N or --file PATH');
      if (args.has('count')) args.int('count', 0, { min: 1, max: 10_000 });
    },
    async run(args) {
      const { addMembers, parseRoster } = await import('../../controls');
      const role = args.string('role') ?? 'Member';
      let entries;
      if (args.has('count')) {
        const { randomBase62 } = await import('../../../lib/ids');
        const batch = randomBase62(6).toLowerCase();
        const domain = args.string('domain') ?? 'example.com';
        entries = Array.from({ length: args.int('count', 0) }, (_, i) => ({
          email: `member-${i + 1}-${batch}@${domain}`,
          name: `Member ${i + 1}`,
        }));
      } else {
        const fs = await import('node:fs/promises');
        const file = args.need('file');
        const text =
          file === '-'
            ? await readAll(process.stdin)
            : await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
                throw args.usage(`cannot read --file ${file}: ${err.code ?? err.message}`);
              });
        entries = parseRoster(text);
      }
      const { memberView } = await import('../views');
      const r = await addMembers({ workspaceId: args.need('workspace'), entries, defaultRole: role });
      return { ...r, members: r.members.map(memberView) };
    },
  },
  list: {
    summary: 'List the members of a workspace with their roles and assigned projects.',
    flags: { workspace: flag.workspace },
    async run(args) {
      const [{ getWorkspace, listMembers }, { memberView }] = await Promise.all([provision(), present()]);
      const w = await getWorkspace(args.need('workspace'));
      return (await listMembers(w.id)).map(memberView);
    },
  },
});
