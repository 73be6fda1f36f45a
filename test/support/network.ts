import { createProject } from '../../admin/provision';
import { config } from '../../lib/config';
import { randomBase62 } from '../../lib/ids';
import { connectedPersonalProject as connectSimulated } from '../../admin/simulatedAccounts';
import { createSimulatorControl, type SimulatorControl } from '../../sim/network/control';

// The network simulator the test runner started (NETWORK_API_URL), scripted through its control API.
export function simulator(): SimulatorControl {
  if (!config.network.apiUrl) throw new Error('NETWORK_API_URL is not set; run the tests through `npm test`');
  return createSimulatorControl(config.network.apiUrl);
}

/** A personal-brand project connected with a real simulator token. */
export function connectedPersonalProject(workspaceId: string, opts: { expiresInSeconds?: number; timezone?: string } = {}) {
  const personId = `p${randomBase62(10)}`;
  return connectSimulated(simulator(), workspaceId, { personId, name: `Ann ${personId}`, vanityName: `ann-${personId}`, ...opts });
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
