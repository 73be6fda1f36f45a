import { encrypt } from '../lib/crypto';
import { db } from '../lib/db';
import { Project } from '../lib/models';
import { AdminError } from './provision';

// Connecting an account happens in the dashboard; operators and tests store the tokens here.
export async function storeConnectionTokens(input: {
  workspaceId: string;
  projectId: string;
  accessToken: string;
  refreshToken?: string | null;
  expiresAt: Date;
  refreshExpiresAt?: Date | null;
  personId: string;
  name?: string;
  vanityName?: string | null;
}) {
  const project = await Project.knexForWorkspace(input.workspaceId).where({ id: input.projectId }).first('id', 'type', 'connection_id');
  if (!project) throw new AdminError(`no project ${input.projectId} in workspace ${input.workspaceId}`);
  if (!project.connection_id) throw new AdminError('this company page is not linked to a personal account; link it first (project link)');
  await db()('network_connections')
    .where({ id: project.connection_id })
    .update({
      network_person_id: input.personId,
      ...(input.name ? { display_name: input.name } : {}),
      ...(input.vanityName !== undefined ? { vanity_name: input.vanityName } : {}),
      access_token_enc: encrypt(input.accessToken),
      refresh_token_enc: input.refreshToken ? encrypt(input.refreshToken) : null,
      access_token_expires_at: input.expiresAt,
      refresh_token_expires_at: input.refreshExpiresAt ?? null,
      connection_status: 'CONNECTED',
      consecutive_failures: 0,
      revoked_at: null,
      last_error: null,
      last_validated_at: db().fn.now(),
      updated_at: db().fn.now(),
    });
  if (project.type !== 'COMPANY_PAGE' && input.vanityName)
    await db()('projects').where({ id: project.id }).update({ username: input.vanityName });
  return db()('network_connections')
    .where({ id: project.connection_id })
    .first('id', 'network_person_id', 'connection_status', 'access_token_expires_at', 'last_validated_at');
}
