import type { Knex } from 'knex';
import { newId } from './ids';
import { inWorkspaceTurns, readThroughIndexes } from './workspaceTurns';

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

/** One event to append to the outbox. */
export interface OutboxEvent {
  workspaceId: string;
  projectId?: string | null;
  type: EventType;
  data: Record<string, unknown>;
}

/**
 * Appends events to the outbox in one INSERT (one statement however many a change emits), in
 * the order given; answers their ids in that order. Nothing is sent for none.
 */
export async function emitEvents(trx: Knex | Knex.Transaction, events: readonly OutboxEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = events.map((e) => ({
    id: newId('event'),
    workspace_id: e.workspaceId,
    project_id: e.projectId ?? null,
    type: e.type,
    data: JSON.stringify(e.data),
  }));
  await trx('outbox_events').insert(rows);
  return rows.map((r) => r.id);
}

export async function emitEvent(trx: Knex | Knex.Transaction, e: OutboxEvent): Promise<string> {
  const [id] = await emitEvents(trx, [e]);
  return id!;
}

/** An outbox row as the relay claims it (the payload is read by the delivery, not the relay). */
export interface ClaimedEvent {
  seq: number;
  id: string;
  workspace_id: string;
  project_id: string | null;
  type: EventType;
  created_at: Date;
}

/**
 * The relay's claim (activities/webhookRelay.ts): up to `limit` undispatched events, locked for
 * the transaction, in seq order. Taken in turns by workspace (lib/workspaceTurns.ts), so one
 * workspace's burst of events takes one share of each batch and another workspace's event is
 * relayed in the next batch, not after the burst; a workspace's own events still go oldest
 * first. SKIP LOCKED: concurrent relays take disjoint rows.
 */
export async function claimUndispatched(trx: Knex.Transaction, limit: number): Promise<ClaimedEvent[]> {
  await readThroughIndexes(trx);
  const turns = inWorkspaceTurns(trx, trx('outbox_events').whereNull('dispatched_at').select('seq', 'workspace_id'), 'seq', limit).select(
    'seq',
  );
  return (
    trx('outbox_events')
      .whereIn('seq', turns)
      // Re-checked under the lock: a concurrent relay may have dispatched the row meanwhile.
      .whereNull('dispatched_at')
      .orderBy('seq')
      .forUpdate()
      .skipLocked()
      .select('seq', 'id', 'workspace_id', 'project_id', 'type', 'created_at')
  );
}

/**
 * Deletes up to `limit` events relayed more than `retentionDays` ago whose deliveries are all
 * closed (delivered or failed), oldest first; answers how many. An event a delivery still waits
 * to send, or one not relayed yet, is kept whatever its age. The delivery rows stay, as the
 * endpoint's history; redelivering one whose event is gone is refused (lib/webhooks/redeliver.ts).
 * Called by the relay while the outbox is drained (activities/webhookRelay.ts), so the table
 * holds the retention window, not every event ever written (docs/webhooks.md "Retention").
 */
export async function pruneOutbox(db: Knex, retentionDays: number, limit: number): Promise<number> {
  const { rowCount } = (await db.raw(
    `delete from outbox_events where seq in (
       select e.seq from outbox_events e
       where e.dispatched_at < now() - make_interval(days => ?)
         and not exists (select 1 from webhook_deliveries d where d.event_id = e.id and d.status in ('pending', 'retrying'))
       order by e.dispatched_at, e.seq
       limit ?)`,
    [retentionDays, limit],
  )) as { rowCount: number };
  return rowCount;
}
