import { db } from '../../../lib/db';
import { ApiError, errors } from '../../../lib/errors';
import { deriveState, reconnectUrl, storedConnection } from '../../../lib/connectionState';
import type { NetworkClient } from '../../../lib/network/client';
import { probeConnection } from '../../../lib/publishing/probe';
import type { ProjectRow } from '../../../lib/presenters/projects';

// spec 3.1: PATCH with a future scheduledFor verifies the connection first; a refusal is
// 409 conflict with details.reason, details.reconnectUrl and details.retryable false, and the
// post is left unchanged. The live check is the one connection probe (lib/publishing/probe.ts),
// which also feeds the connection's failure streak by the one rule (docs/publishing.md).

export function schedulingConflict(project: Pick<ProjectRow, 'id' | 'workspace_id'>, reason: string, message: string) {
  return errors.conflict(message, { reason, reconnectUrl: reconnectUrl(project.workspace_id, project.id), retryable: false });
}

const REASONS: Record<string, string> = {
  no_token: 'No network token is on file for this account; connect it in the dashboard.',
  revoked: 'The network authorization for this account was withdrawn; reconnect it in the dashboard.',
  expired: 'The network access token expired and cannot be renewed; reconnect the account in the dashboard.',
  token_refresh_failed: 'The network refused to renew the access token; reconnect the account in the dashboard.',
  disconnected: 'This account is disconnected from the network; reconnect it in the dashboard.',
  no_admins: 'The company page has no administrator left on the network who can publish for it.',
};

export async function verifyConnectionForScheduling(network: NetworkClient, project: ProjectRow): Promise<void> {
  if (!project.c_id)
    throw schedulingConflict(project, 'not_linked', 'This company page is not linked to a network account, so nothing can publish for it.');
  // No token on file is refused at once, without a network call.
  if (!project.access_token_enc) throw schedulingConflict(project, 'no_token', REASONS.no_token!);
  const state = deriveState(storedConnection(project));
  if (state === 'revoked' || state === 'disconnected') throw schedulingConflict(project, state, REASONS[state]!);

  // Live check (token refresh when due, then identity or admin set); the outcome commits with
  // the streak even when the answer is a refusal.
  const connectionId = project.c_id;
  const organizationId = (project as unknown as { network_organization_id: string | null }).network_organization_id;
  const result = await db().transaction((trx) => probeConnection(trx, network, { connectionId, type: project.type, organizationId }));
  if (result.ok) return;
  if (result.transient) {
    throw new ApiError(
      'temporarily_unavailable',
      'The network could not be reached to verify the connection; retry shortly.',
      { retryable: true },
      { 'Retry-After': '5' },
    );
  }
  const reason = result.reason === 'token_revoked' ? 'revoked' : result.reason;
  throw schedulingConflict(
    project,
    reason,
    REASONS[reason] ?? `The network refused the account's credentials (${reason}); reconnect it in the dashboard.`,
  );
}
