import { storeConnectionTokens } from '../../ops/connections';
import { createProject } from '../../ops/provision';
import { config } from '../../lib/config';
import { randomBase62 } from '../../lib/ids';
import { createSimulatorControl, type SimulatorControl } from '../../sim/network/control';

// The network simulator the test runner started (NETWORK_API_URL), scripted through its control API.
export function simulator(): SimulatorControl {
  if (!config.network.apiUrl) throw new Error('NETWORK_API_URL is not set; run the tests through `npm test`');
  return createSimulatorControl(config.network.apiUrl);
}

/** A personal-brand project connected with a real simulator token. */
export async function connectedPersonalProject(workspaceId: string, opts: { expiresInSeconds?: number; timezone?: string } = {}) {
  const sim = simulator();
  const personId = `p${randomBase62(10)}`;
  const token = await sim.issueToken({
    personId,
    name: `Ann ${personId}`,
    vanityName: `ann-${personId}`,
    expiresInSeconds: opts.expiresInSeconds,
  });
  const project = await createProject({
    workspaceId,
    type: 'PERSONAL_BRAND',
    name: `Ann ${personId}`,
    connection: 'none',
    timezone: opts.timezone,
  });
  await storeConnectionTokens({
    workspaceId,
    projectId: project.id,
    accessToken: token.accessToken,
    refreshToken: token.refreshToken,
    expiresAt: new Date(token.expiresAt),
    refreshExpiresAt: token.refreshTokenExpiresAt ? new Date(token.refreshTokenExpiresAt) : null,
    personId,
    name: `Ann ${personId}`,
  });
  return { project, personId, token };
}

/** A company page linked to a connected personal project whose person administers the organization. */
export async function connectedCompanyPage(workspaceId: string, admins: 'self' | 'none' = 'self') {
  const personal = await connectedPersonalProject(workspaceId);
  const organizationId = String(Math.floor(Math.random() * 1e9));
  const page = await createProject({
    workspaceId,
    type: 'COMPANY_PAGE',
    name: `Org ${organizationId}`,
    linkedProjectId: personal.project.id,
    organizationId,
  });
  await simulator().setOrganizationAdmins(organizationId, admins === 'self' ? [personal.personId] : []);
  return { page, organizationId, personal };
}
