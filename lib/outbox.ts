import type { Knex } from 'knex';
import { newId } from './ids';

// spec 6: events are written to the outbox in the same transaction as the change that emits
// them; the webhook dispatcher delivers them from there, so no committed change loses its event.

export type EventType =
  | 'post.created'
  | 'post.updated'
  | 'post.scheduled'
  | 'post.unscheduled'
  | 'post.published'
  | 'post.publish_failed'
  | 'post.deleted'
  | 'job.completed'
  | 'post.review_requested'
  | 'post.approved'
  | 'post.rejected'
  | 'post.review_overdue';

export const EVENT_TYPES: readonly EventType[] = [
  'post.created',
  'post.updated',
  'post.scheduled',
  'post.unscheduled',
  'post.published',
  'post.publish_failed',
  'post.deleted',
  'job.completed',
  // Review before publishing (docs/review.md).
  'post.review_requested',
  'post.approved',
  'post.rejected',
  'post.review_overdue',
];

export async function emitEvent(
  trx: Knex | Knex.Transaction,
  e: { workspaceId: string; projectId?: string | null; type: EventType; data: Record<string, unknown> },
): Promise<string> {
  const id = newId('event');
  await trx('outbox_events').insert({
    id,
    workspace_id: e.workspaceId,
    project_id: e.projectId ?? null,
    type: e.type,
    data: JSON.stringify(e.data),
  });
  return id;
}
