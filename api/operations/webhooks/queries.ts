import type { TransactionOrKnex } from 'objection';
import { WebhookEndpoint as WebhookEndpointModel } from '../../../lib/models';
import type { EndpointRow } from '../../../lib/presenters/webhooks';
import type { AuthContext } from '../../auth/context';

// The webhook endpoint reads of the operations: the endpoints a caller may manage, with the
// columns lib/presenters/webhooks.ts presents.

const COLUMNS = [
  'id',
  'workspace_id',
  'project_id',
  'url',
  'name',
  'events',
  'is_active',
  'disabled_reason',
  'disabled_at',
  'secret_last4',
  'previous_secret_expires_at',
  'consecutive_failures',
  'last_success_at',
  'last_failure_at',
  'created_at',
  'updated_at',
].map((c) => `webhook_endpoints.${c}`);

/** The endpoints the caller may manage (lib/models WebhookEndpoint.manageableBy). */
export function endpointsOf(auth: AuthContext, trx?: TransactionOrKnex) {
  return WebhookEndpointModel.manageableBy(auth, trx);
}

export function selectEndpoints(auth: AuthContext, trx?: TransactionOrKnex) {
  return endpointsOf(auth, trx).select(COLUMNS);
}

export async function findEndpoint(auth: AuthContext, id: string, trx?: TransactionOrKnex): Promise<EndpointRow | undefined> {
  return selectEndpoints(auth, trx).findById(id);
}
