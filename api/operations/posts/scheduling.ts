import { errors } from '../../../lib/errors';
import { deriveState, reconnectUrl } from '../../../lib/connectionState';
import type { PostRow } from '../../../lib/posts/present';
import type { AuthContext } from '../../auth/context';
import type { ProjectRow } from '../projects/present';

// spec 3.1: PATCH with a future scheduledFor verifies the connection first; a refusal is
// 409 conflict with details.reason, details.reconnectUrl and details.retryable false.

export function schedulingConflict(project: Pick<ProjectRow, 'id' | 'workspace_id'>, reason: string, message: string) {
  return errors.conflict(message, { reason, reconnectUrl: reconnectUrl(project.workspace_id, project.id), retryable: false });
}

export async function verifyConnectionForScheduling(_auth: AuthContext, project: ProjectRow): Promise<void> {
  if (!project.c_id) throw schedulingConflict(project, 'not_linked', 'This company page is not linked to a network account, so nothing can publish for it.');
  if (!project.access_token_enc) throw schedulingConflict(project, 'no_token', 'No network token is on file for this account; connect it in the dashboard.');
  const state = deriveState({
    access_token_enc: project.access_token_enc, access_token_expires_at: project.access_token_expires_at, connection_status: project.connection_status ?? 'UNKNOWN',
    last_validated_at: project.last_validated_at, consecutive_failures: project.consecutive_failures ?? 0, revoked_at: project.revoked_at,
  });
  if (state === 'revoked') throw schedulingConflict(project, 'revoked', 'The network authorization for this account was withdrawn; reconnect it in the dashboard.');
  if (state === 'disconnected') throw schedulingConflict(project, 'disconnected', 'This account is disconnected from the network; reconnect it in the dashboard.');
}

export async function afterScheduleCommitted(_post: PostRow): Promise<void> {}
