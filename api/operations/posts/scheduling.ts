import { db } from '../../../lib/db';
import { ApiError, errors } from '../../../lib/errors';
import { deriveState, reconnectUrl } from '../../../lib/connectionState';
import { log } from '../../../lib/logger';
import { createNetworkClient, type NetworkClient } from '../../../lib/network/client';
import { isNetworkError } from '../../../lib/network/errors';
import type { PostRow } from '../../../lib/posts/present';
import { recordConnectionFailure, recordConnectionSuccess, TokenUnavailable, usableAccessToken } from '../../../lib/publishing/tokens';
import { syncPublishWorkflow } from '../../../lib/publishing/workflows';
import { temporalClient } from '../../../lib/temporal';
import type { AuthContext } from '../../auth/context';
import type { ProjectRow } from '../projects/present';

// spec 3.1: PATCH with a future scheduledFor verifies the connection first; a refusal is
// 409 conflict with details.reason, details.reconnectUrl and details.retryable false, and the
// post is left unchanged.

let network: NetworkClient | undefined;
function networkClient(): NetworkClient {
  network ??= createNetworkClient();
  return network;
}

export function schedulingConflict(project: Pick<ProjectRow, 'id' | 'workspace_id'>, reason: string, message: string) {
  return errors.conflict(message, { reason, reconnectUrl: reconnectUrl(project.workspace_id, project.id), retryable: false });
}

const TOKEN_REASONS: Record<TokenUnavailable['reason'], string> = {
  no_token: 'No network token is on file for this account; connect it in the dashboard.',
  revoked: 'The network authorization for this account was withdrawn; reconnect it in the dashboard.',
  expired: 'The network access token expired and cannot be renewed; reconnect the account in the dashboard.',
  refresh_failed: 'The network refused to renew the access token; reconnect the account in the dashboard.',
};

export async function verifyConnectionForScheduling(_auth: AuthContext, project: ProjectRow): Promise<void> {
  if (!project.c_id) throw schedulingConflict(project, 'not_linked', 'This company page is not linked to a network account, so nothing can publish for it.');
  // No token on file is refused at once, without a network call.
  if (!project.access_token_enc) throw schedulingConflict(project, 'no_token', TOKEN_REASONS.no_token);
  const state = deriveState({
    access_token_enc: project.access_token_enc, access_token_expires_at: project.access_token_expires_at, connection_status: project.connection_status ?? 'UNKNOWN',
    last_validated_at: project.last_validated_at, consecutive_failures: project.consecutive_failures ?? 0, revoked_at: project.revoked_at,
  });
  if (state === 'revoked') throw schedulingConflict(project, 'revoked', TOKEN_REASONS.revoked);
  if (state === 'disconnected') throw schedulingConflict(project, 'disconnected', 'This account is disconnected from the network; reconnect it in the dashboard.');

  // Live check: a token refresh when due, then the identity (personal accounts) or a
  // non-empty admin set (company pages). Each call counts into the connection's streak.
  const connectionId = project.c_id;
  const refusal = await db().transaction(async (trx) => {
    try {
      const { token } = await usableAccessToken(trx, networkClient(), connectionId);
      if (project.type === 'COMPANY_PAGE') {
        const admins = await networkClient().listOrganizationAdmins(token, (project as unknown as { network_organization_id: string }).network_organization_id);
        if (admins.length === 0) {
          await recordConnectionFailure(trx, connectionId, 'no_admins');
          return schedulingConflict(project, 'no_admins', 'The company page has no administrator left on the network who can publish for it.');
        }
      } else {
        await networkClient().getIdentity(token);
      }
      await recordConnectionSuccess(trx, connectionId);
      return null;
    } catch (err) {
      if (err instanceof TokenUnavailable) {
        if (err.reason === 'refresh_failed') await recordConnectionFailure(trx, connectionId, err.message, { revokeNow: true });
        return schedulingConflict(project, err.reason === 'refresh_failed' ? 'token_refresh_failed' : err.reason, TOKEN_REASONS[err.reason]);
      }
      if (isNetworkError(err) && err.kind !== 'transient') {
        const revoked = err.code === 'token_revoked';
        await recordConnectionFailure(trx, connectionId, err.code, { revokeNow: revoked });
        return schedulingConflict(project, revoked ? 'revoked' : err.code, revoked ? TOKEN_REASONS.revoked : `The network refused the account's credentials (${err.code}); reconnect it in the dashboard.`);
      }
      if (isNetworkError(err)) {
        return new ApiError(503, 'temporarily_unavailable', 'The network could not be reached to verify the connection; retry shortly.', { retryable: true }, { 'Retry-After': '5' });
      }
      throw err;
    }
  });
  if (refusal) throw refusal;
}

/**
 * After the commit: tell the post's publish workflow. If Temporal cannot be reached now, the
 * change is already durable and the reconciler delivers it (posts.workflow_synced_version).
 */
export async function afterScheduleCommitted(post: PostRow): Promise<void> {
  try {
    await syncPublishWorkflow(await temporalClient(), db(), post);
  } catch (err) {
    log.warn('publish workflow sync deferred to the reconciler', { postId: post.id, err });
  }
}
