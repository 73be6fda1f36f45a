import type { TransactionOrKnex } from 'objection';
import { readPrepared, shapedRead } from '../../../lib/db';
import { WebhookEndpoint as WebhookEndpointModel, reachParams, reachShape, reachValues, type Reach } from '../../../lib/models';
import type { EndpointRow } from '../../../lib/presenters/webhooks';

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
export function endpointsOf(reach: Reach, trx?: TransactionOrKnex) {
  return WebhookEndpointModel.manageableBy(reach, trx);
}

export function selectEndpoints(reach: Reach, trx?: TransactionOrKnex) {
  return endpointsOf(reach, trx).select(COLUMNS);
}

/**
 * One endpoint by id (findEndpoint), by shape: how many projects the reader is narrowed to (null:
 * every project). Compiled once per shape and read as a prepared statement, as the post list's
 * page is (lib/db.ts `shapedRead`): every endpoint operation and the deliveries list begin here.
 */
const endpointById = shapedRead(
  (projects: number | null, param: (name: 'workspaceId' | 'projectIds' | 'endpointId', index?: number) => string) =>
    selectEndpoints(reachParams(projects, param)).findById(param('endpointId')).toKnexQuery(),
);

export async function findEndpoint(reach: Reach, id: string): Promise<EndpointRow | undefined> {
  const [row] = await readPrepared<EndpointRow>(endpointById(reachShape(reach), { ...reachValues(reach), endpointId: id }));
  return row;
}
