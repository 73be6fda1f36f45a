import { EVENT_TYPES } from '../outbox';

// The delivery body (spec 6: "the delivery payload shape: not shown"; documented in
// docs/webhooks.md). It is built from the stored outbox row only, so every attempt of a
// delivery sends the same bytes and receivers can de-duplicate on `id`.

export interface OutboxEventRow {
  id: string;
  workspace_id: string;
  project_id: string | null;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

export interface WebhookPayload {
  id: string;
  type: string;
  createdAt: string;
  workspaceId: string;
  projectId: string | null;
  data: Record<string, unknown>;
}

export function webhookPayload(e: OutboxEventRow): WebhookPayload {
  return {
    id: e.id,
    type: e.type,
    createdAt: e.created_at.toISOString(),
    workspaceId: e.workspace_id,
    projectId: e.project_id,
    data: e.data,
  };
}

/** Names an endpoint may subscribe to: every event the service emits (spec 6 plus post.published / post.publish_failed). */
export const SUBSCRIBABLE_EVENTS: readonly string[] = EVENT_TYPES;
