import { config } from '../../../lib/config';
import { CONNECTION_PRESETS } from '../../presets';
import { defineNoun, flag } from '../registry';

const provision = () => import('../../provision');

const PROJECT_TYPES = ['PERSONAL_BRAND', 'COMPANY_PAGE', 'AMPLIFIER'] as const;

/** Re-read through the same join as the list, so every verb prints the same project shape. */
async function projectById(workspaceId: string, projectId: string) {
  const [{ listProjects }, { projectView }] = await Promise.all([provision(), import('../views')]);
  const row = (await listProjects(workspaceId)).find((p: { id: string }) => p.id === projectId);
  return projectView(row);
}

export default defineNoun('project', 'Projects (network accounts, company pages, amplifiers) and their connection.', {
  create: {
    summary: 'Create a project with a simulated network connection in a given state.',
    flags: {
      workspace: flag.workspace,
      type: { required: true, choices: PROJECT_TYPES, help: 'kind of account' },
      name: { required: true, value: 'NAME', help: 'display name (person or company)' },
      username: { value: 'SLUG', help: 'bare profile slug or company vanity name' },
      connection: {
        choices: CONNECTION_PRESETS,
        help: 'stored connection health (default connected); none = never connected, and a company page with none has no connection at all',
      },
      'linked-project': { value: 'proj_y', help: 'COMPANY_PAGE only: publish through this personal-brand or amplifier project' },
      timezone: { value: 'IANA_ZONE', help: 'calendar timezone (default UTC)' },
      language: { value: 'CODE', help: 'content language (default en)' },
    },
    examples: [
      '--workspace org_x --type PERSONAL_BRAND --name "Ann Lee" --username ann-lee --timezone Europe/Paris --language fr',
      '--workspace org_x --type COMPANY_PAGE --name "Acme Inc" --linked-project proj_y',
    ],
    check(args) {
      const linked = args.string('linked-project');
      if (linked && args.string('type') !== 'COMPANY_PAGE') throw args.usage('--linked-project applies to --type COMPANY_PAGE only');
      // A linked page borrows the admin's connection, so a preset for it would be silently ignored.
      if (linked && args.has('connection'))
        throw args.usage('a linked company page uses the connection of --linked-project; drop --connection');
      const language = args.string('language');
      if (language !== undefined && (language.length === 0 || language.length > config.limits.languageChars)) {
        throw args.usage(`--language must be 1 to ${config.limits.languageChars} characters`);
      }
    },
    async run(args) {
      const workspaceId = args.need('workspace');
      const type = args.need('type') as (typeof PROJECT_TYPES)[number];
      const linked = args.string('linked-project');
      const language = args.string('language');
      const { createProject, getWorkspace } = await provision();
      // Checked here so a typo reads "no workspace org_…" rather than a foreign-key violation.
      await getWorkspace(workspaceId);
      const p = await createProject({
        workspaceId,
        type,
        name: args.need('name'),
        username: args.string('username') ?? null,
        connection: args.string('connection') as (typeof CONNECTION_PRESETS)[number] | undefined,
        linkedProjectId: linked,
        timezone: args.string('timezone'),
        language,
      });
      return projectById(workspaceId, p.id);
    },
  },
  link: {
    summary: 'Link a company page to the personal account of one of its admins (the page publishes through it).',
    flags: {
      workspace: flag.workspace,
      project: { required: true, value: 'proj_page', help: 'the COMPANY_PAGE project' },
      'admin-project': { required: true, value: 'proj_person', help: 'a PERSONAL_BRAND or AMPLIFIER project of the same workspace' },
    },
    async run(args) {
      const workspaceId = args.need('workspace');
      const { linkCompanyPage } = await provision();
      const page = await linkCompanyPage(workspaceId, args.need('project'), args.need('admin-project'));
      return projectById(workspaceId, page.id);
    },
  },
  archive: {
    summary: 'Delete a project by archiving it: the API no longer returns it. Refused while it has scheduled posts.',
    flags: { workspace: flag.workspace, project: flag.project },
    async run(args) {
      const { archiveProject } = await import('../../controls');
      return archiveProject({ workspaceId: args.need('workspace'), projectId: args.need('project') });
    },
  },
  list: {
    summary: 'List the projects of a workspace with their connection state.',
    flags: { workspace: flag.workspace },
    async run(args) {
      const [{ getWorkspace, listProjects }, { projectView }] = await Promise.all([provision(), import('../views')]);
      const w = await getWorkspace(args.need('workspace'));
      return (await listProjects(w.id)).map(projectView);
    },
  },
});
