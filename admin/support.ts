import type { AnyOperation } from '../api/operation';
import { config } from '../lib/config';
import { db } from '../lib/db';
import { AdminError, getWorkspace } from './provision';
import { callOperation, operate, operatorContext } from './asOperator';

// Support tasks that would otherwise need a dashboard (issue 29 item 7), each through the API's
// own operation (admin/asOperator.ts) or the lib function the service uses. The operator names a
// record by its id; the workspace it belongs to is looked up here, and the operation then runs
// scoped to that workspace as for any client.

async function workspaceOf(table: string, id: string, what: string): Promise<{ workspace_id: string; project_id?: string | null }> {
  const row = await db()(table).where({ id }).first();
  if (!row) throw new AdminError(`no ${what} ${id}`);
  return row;
}

// --- Webhook endpoints (spec 4.8, docs/webhooks.md) -------------------------------------------

const webhookOps = () => import('../api/operations/webhooks/endpoints');

export async function createWebhookEndpoint(input: {
  workspaceId: string;
  url: string;
  events: string[];
  name?: string;
  projectId?: string;
}) {
  const { createWebhookEndpoint: op } = await webhookOps();
  const { workspaceId, ...body } = input;
  return operate(workspaceId, op as AnyOperation, body);
}

export async function listWebhookEndpoints(input: { workspaceId: string; limit: number }) {
  const { listWebhookEndpoints: op } = await webhookOps();
  const page = await callOperation<{ data: unknown[]; pagination: { total: number; has_more: boolean } }>(
    op as AnyOperation,
    await operatorContext(input.workspaceId),
    { limit: String(input.limit) },
  );
  return { workspaceId: input.workspaceId, total: page.pagination.total, endpoints: page.data };
}

/** The endpoint and its most recent deliveries, each with its attempts. */
export async function showWebhookEndpoint(input: { endpointId: string; deliveries: number }) {
  const { getWebhookEndpoint, listWebhookDeliveries } = await webhookOps();
  const { workspace_id } = await workspaceOf('webhook_endpoints', input.endpointId, 'webhook endpoint');
  const ctx = await operatorContext(workspace_id);
  const endpoint = (
    await callOperation<{ data: Record<string, unknown> }>(getWebhookEndpoint as AnyOperation, ctx, { endpointId: input.endpointId })
  ).data;
  const deliveries = await callOperation<{ data: unknown[] }>(listWebhookDeliveries as AnyOperation, ctx, {
    endpointId: input.endpointId,
    limit: String(input.deliveries),
  });
  return { ...endpoint, workspaceId: workspace_id, deliveries: deliveries.data };
}

/** PATCH isActive through the API's operation: enabling clears the failure streak (spec 3.5, 6 rule 5). */
export async function setWebhookEndpointActive(input: { endpointId: string; active: boolean }) {
  const { updateWebhookEndpoint } = await webhookOps();
  const { workspace_id } = await workspaceOf('webhook_endpoints', input.endpointId, 'webhook endpoint');
  return operate(workspace_id, updateWebhookEndpoint as AnyOperation, { endpointId: input.endpointId, isActive: input.active });
}

/**
 * Sends one event to one endpoint again (docs/webhooks.md "Redelivering an event"): the delivery
 * is reopened and the endpoint's delivery workflow woken with the relay's own start.
 */
export async function redeliverWebhook(input: { deliveryId?: string; endpointId?: string; eventId?: string }) {
  const [{ reopenDelivery, RedeliveryRefused }, { wakeEndpoint }, { temporalClient, closeTemporalClient }] = await Promise.all([
    import('../lib/webhooks/redeliver'),
    import('../lib/temporal/start/webhookEndpoint'),
    import('../lib/temporal/client'),
  ]);
  let deliveryId = input.deliveryId;
  if (!deliveryId) {
    const d = await db()('webhook_deliveries').where({ endpoint_id: input.endpointId, event_id: input.eventId }).first('id');
    if (!d) throw new AdminError(`no delivery of event ${input.eventId} to webhook endpoint ${input.endpointId}`);
    deliveryId = d.id as string;
  }
  let reopened;
  try {
    reopened = await reopenDelivery(db(), deliveryId);
  } catch (err) {
    throw err instanceof RedeliveryRefused ? new AdminError(err.message) : err;
  }
  try {
    await wakeEndpoint(await temporalClient(), config.temporalTaskQueue, reopened.endpoint_id, reopened.workspace_id);
  } finally {
    await closeTemporalClient();
  }
  return {
    deliveryId: reopened.id,
    endpointId: reopened.endpoint_id,
    workspaceId: reopened.workspace_id,
    eventId: reopened.event_id,
    status: reopened.status,
    // The next attempt is numbered after the ones already made (Webhook-Attempt header too).
    nextAttempt: reopened.attempt_count + 1,
  };
}

// --- Ideas (spec 4.6) -------------------------------------------------------------------------

/** PATCH /v1/ideas/{id} linkedPostId through its operation (null unlinks). */
export async function linkIdea(input: { ideaId: string; postId: string | null }) {
  const { updateIdea } = await import('../api/operations/ideas/ideas');
  const idea = await workspaceOf('ideas', input.ideaId, 'idea');
  return operate(idea.workspace_id, updateIdea as AnyOperation, {
    ideaId: input.ideaId,
    projectId: idea.project_id,
    linkedPostId: input.postId,
  });
}

// --- Knowledge (spec 4.5, docs/knowledge.md) --------------------------------------------------

export interface KnowledgeDocumentInput {
  workspaceId: string;
  projectId?: string;
  scope: 'PROJECT' | 'WORKSPACE';
  name?: string;
  tags: string[];
  language?: string;
  text?: string;
  file?: { bytes: Buffer; mimeType: string; filename: string };
  url?: string;
  youtube?: string;
}

/** POST /v1/knowledge through its operation: a KNOWLEDGE_INGEST job, queued on Temporal. */
export async function addKnowledgeDocument(input: KnowledgeDocumentInput) {
  const [{ createKnowledge }, { closeTemporalClient }] = await Promise.all([
    import('../api/operations/knowledge/knowledge'),
    import('../lib/temporal/client'),
  ]);
  const source =
    input.text !== undefined
      ? { type: 'text', text: input.text }
      : input.file
        ? {
            type: 'file',
            content_base64: input.file.bytes.toString('base64'),
            mimeType: input.file.mimeType,
            filename: input.file.filename,
          }
        : input.url !== undefined
          ? { type: 'url', url: input.url }
          : { type: 'youtube', videoId: input.youtube };
  try {
    return await operate(input.workspaceId, createKnowledge as AnyOperation, {
      ...source,
      scope: input.scope,
      projectId: input.projectId,
      name: input.name,
      tags: input.tags.length ? input.tags : undefined,
      language: input.language,
    });
  } finally {
    await closeTemporalClient();
  }
}

// --- Post statuses (spec 2.7 statusId, GET /v1/post-statuses) ---------------------------------

/** The workspace's statuses as GET /v1/post-statuses shows them (with post counts). */
export async function listPostStatuses(workspaceId: string) {
  const { listPostStatuses: op } = await import('../api/operations/posts/postStatuses');
  return operate<Array<{ id: string }>>(workspaceId, op as AnyOperation, {});
}

/** A status change by lib/posts/statuses.ts, answered with the status as the list shows it. */
async function changeStatus(workspaceId: string, change: () => Promise<{ id: string }>) {
  const { ApiError } = await import('../lib/errors');
  let id: string;
  try {
    id = (await change()).id;
  } catch (err) {
    throw err instanceof ApiError ? new AdminError(err.message) : err;
  }
  return (await listPostStatuses(workspaceId)).find((s) => s.id === id);
}

export async function createPostStatus(input: { workspaceId: string; category: string; title: string; makeDefault: boolean }) {
  const { createStatus } = await import('../lib/posts/statuses');
  await getWorkspace(input.workspaceId);
  return changeStatus(input.workspaceId, () =>
    createStatus(db(), input.workspaceId, { category: input.category as never, title: input.title, makeDefault: input.makeDefault }),
  );
}

export async function renamePostStatus(input: { statusId: string; title: string }) {
  const { renameStatus } = await import('../lib/posts/statuses');
  const { workspace_id } = await workspaceOf('post_statuses', input.statusId, 'post status');
  return changeStatus(workspace_id, () => renameStatus(db(), workspace_id, input.statusId, input.title));
}

export async function setDefaultPostStatus(input: { statusId: string }) {
  const { setDefaultStatus } = await import('../lib/posts/statuses');
  const { workspace_id } = await workspaceOf('post_statuses', input.statusId, 'post status');
  return changeStatus(workspace_id, () => setDefaultStatus(db(), workspace_id, input.statusId));
}
