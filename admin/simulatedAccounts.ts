import { storeConnectionTokens } from './connections';
import { createProject } from './provision';
import type { IssueTokenInput, SimulatorControl } from '../sim/network/control';

/**
 * A personal-brand project (or an amplifier's, with `type`) connected with a real simulator
 * token: the token issued by the simulator, the project made through the operator's provisioning
 * code, the token stored as the dashboard's connect flow stores it. For the tests, the benches
 * and the cluster smoke run.
 */
export async function connectedPersonalProject(
  sim: SimulatorControl,
  workspaceId: string,
  person: IssueTokenInput & { name: string; projectName?: string; timezone?: string; type?: 'PERSONAL_BRAND' | 'AMPLIFIER' },
) {
  const { projectName, timezone, type = 'PERSONAL_BRAND', ...issue } = person;
  const token = await sim.issueToken(issue);
  const project = await createProject({
    workspaceId,
    type,
    name: projectName ?? person.name,
    connection: 'none',
    timezone,
  });
  await storeConnectionTokens({
    workspaceId,
    projectId: project.id,
    accessToken: token.accessToken,
    refreshToken: token.refreshToken,
    expiresAt: new Date(token.expiresAt),
    refreshExpiresAt: token.refreshTokenExpiresAt ? new Date(token.refreshTokenExpiresAt) : null,
    personId: person.personId,
    name: person.name,
  });
  return { project, personId: person.personId, token };
}
