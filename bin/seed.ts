// `npm run seed`: demo data for trying the API locally, made through the same provisioning
// code as bin/admin. Running it again reuses the "Demo Workspace", its projects and the demo
// user (restoring what a previous session may have changed: plan, company-page link, password,
// role) and issues one more key, because a key's plaintext cannot be shown a second time.
import {
  AdminError,
  addMember,
  createProject,
  createUser,
  createWorkspace,
  findUser,
  issueApiKey,
  linkCompanyPage,
  listProjects,
  setUserPassword,
  setWorkspacePlan,
  type ConnectionPreset,
} from '../admin/provision';
import { storeConnectionTokens } from '../admin/connections';
import { config, serviceAddresses } from '../lib/config';
import { createSimulatorControl } from '../sim/network/control';
import { db } from '../lib/db';
import { Project } from '../lib/models';
import { projectView } from '../admin/cli/views';
import { closeServices, describeError, exitSoon, openServices } from '../admin/cli/runtime';

const WORKSPACE_NAME = 'Demo Workspace';
const PLAN = 'BUSINESS';
const USER = { email: 'demo@example.com', name: 'Demo Admin', password: 'demo-password' };
const KEY_SCOPES = ['read', 'write', 'posts:publish', 'posts:destroy'];
const PROJECTS = {
  personal: { type: 'PERSONAL_BRAND', name: 'Dana Reed', username: 'dana-reed', connection: 'connected' },
  amplifier: { type: 'AMPLIFIER', name: 'Sam Amplifier', username: 'sam-amplifier', connection: 'expiring_soon' },
  company: { type: 'COMPANY_PAGE', name: 'Demo Company', username: 'demo-company' },
} as const;

async function findOrCreateProject(
  workspaceId: string,
  spec: { type: 'PERSONAL_BRAND' | 'AMPLIFIER' | 'COMPANY_PAGE'; name: string; username: string; connection?: ConnectionPreset },
  linkedProjectId?: string,
) {
  const existing = await Project.knexForWorkspace(workspaceId)
    .where({ type: spec.type, username: spec.username })
    .orderBy('created_at')
    .first('id');
  if (existing) return { id: existing.id as string, created: false };
  const p = await createProject({
    workspaceId,
    type: spec.type,
    name: spec.name,
    username: spec.username,
    connection: spec.connection,
    linkedProjectId,
  });
  return { id: p.id as string, created: true };
}

async function main() {
  await openServices();

  let workspace = await db()('workspaces').where({ name: WORKSPACE_NAME }).orderBy('created_at').first();
  const reused = Boolean(workspace);
  if (!workspace) workspace = await createWorkspace({ name: WORKSPACE_NAME, plan: PLAN });
  // A key on a plan without API access would not work, and a working key is the point.
  else if (workspace.plan !== PLAN) workspace = await setWorkspacePlan(workspace.id, PLAN);

  const personal = await findOrCreateProject(workspace.id, PROJECTS.personal);
  const amplifier = await findOrCreateProject(workspace.id, PROJECTS.amplifier);
  const company = await findOrCreateProject(workspace.id, PROJECTS.company, personal.id);
  if (!company.created) await linkCompanyPage(workspace.id, company.id, personal.id);

  // With `npm start` running, the personal account gets real tokens from the local network
  // simulator (and administers the company page there), so scheduled demo posts really publish.
  let networkNote = 'preset tokens: run `npm start` first, then seed again, for an account that can publish';
  try {
    const sim = createSimulatorControl(serviceAddresses().network.address, { timeoutMs: 1_000 });
    await sim.health();
    const issued = await sim.issueToken({ personId: 'dana-reed', name: PROJECTS.personal.name, vanityName: PROJECTS.personal.username });
    await storeConnectionTokens({
      workspaceId: workspace.id,
      projectId: personal.id,
      accessToken: issued.accessToken,
      refreshToken: issued.refreshToken,
      expiresAt: new Date(issued.expiresAt),
      refreshExpiresAt: issued.refreshTokenExpiresAt ? new Date(issued.refreshTokenExpiresAt) : null,
      personId: 'dana-reed',
      name: PROJECTS.personal.name,
      vanityName: PROJECTS.personal.username,
    });
    const org = await db()('projects').where({ id: company.id }).first('network_organization_id');
    await sim.setOrganizationAdmins(org.network_organization_id, ['dana-reed']);
    networkNote = 'connected through the local network simulator';
  } catch {
    // No simulator reachable: the preset connection stays.
  }

  let user;
  try {
    user = await findUser(USER.email);
    await setUserPassword(user.id, USER.password);
  } catch (err) {
    if (!(err instanceof AdminError)) throw err;
    user = await createUser(USER);
  }
  await addMember({ workspaceId: workspace.id, user: user.id, role: 'Admin' });

  const key = await issueApiKey({ workspaceId: workspace.id, scopes: KEY_SCOPES, mode: 'live', name: 'seed' });

  const projects: ReturnType<typeof projectView>[] = (await listProjects(workspace.id)).map(projectView);
  const line = (id: string, note: string) => {
    const p = projects.find((x) => x.id === id)!;
    return `${p.id}  ${p.name.padEnd(14)} ${p.type.padEnd(15)} ${note}`;
  };
  const out = [
    reused ? `Reused the existing ${WORKSPACE_NAME} and issued a new API key.` : `Created the ${WORKSPACE_NAME}.`,
    '',
    `  workspace  ${workspace.id}  ${workspace.name} (${PLAN})`,
    `  projects   ${line(personal.id, projects.find((x) => x.id === personal.id)!.network?.state ?? 'no connection')}`,
    `             ${line(amplifier.id, projects.find((x) => x.id === amplifier.id)!.network?.state ?? 'no connection')}`,
    `             ${line(company.id, `linked to ${PROJECTS.personal.name}`)}`,
    `  network    ${networkNote}`,
    `  user       ${USER.email} / ${USER.password} (Admin)`,
    `  API key    ${key.id} (${key.mode}, scopes ${KEY_SCOPES.join(',')}, ${key.scopes.length} once expanded)`,
    '',
    `  ${key.key}`,
    '',
    'Try it once the API is running (npm start):',
    '',
    `  curl -H "Authorization: Bearer ${key.key}" ${config.publicUrl}/v1/workspaces/me`,
    '',
    'Running npm run seed again reuses this workspace, its projects and the user and prints a new key;',
    `earlier keys stay valid until revoked (bin/admin key list --workspace ${workspace.id}, bin/admin key revoke --key <id>).`,
  ];
  console.log(out.join('\n'));
}

main()
  .catch((err) => {
    process.stderr.write(`seed: ${describeError(err)}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    await closeServices();
    exitSoon();
  });
