import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import pLimit from 'p-limit';
import type pg from 'pg';
import { newId } from '../lib/ids';
import { claimUndispatched, pruneOutbox } from '../lib/outbox';
import { wakeEndpoint } from '../lib/temporal/start/webhookEndpoint';
import { inactiveReason } from './webhookDelivery';
import type { WebhookDeps, WebhookOptions } from './webhooks';

// The outbox relay (docs/webhooks.md "How it runs"): committed outbox events become delivery
// rows, one per matching endpoint, and the endpoint's delivery workflow is woken.

const INSERT_CHUNK = 1000;

/** Wakes the relay on `NOTIFY outbox_events` (migration 20261121000030), else after the poll interval. */
async function outboxListener(db: Knex) {
  let pending = false;
  let wake: (() => void) | null = null;
  const onNotify = () => {
    pending = true;
    wake?.();
  };
  // A pooled connection held for the run: LISTEN belongs to the session that issued it.
  let conn: pg.Client | null = null;
  try {
    conn = (await db.client.acquireConnection()) as pg.Client;
    conn.on('notification', onNotify);
    await conn.query('LISTEN outbox_events');
  } catch {
    // Polling alone is still correct, only slower.
    if (conn) {
      conn.removeListener('notification', onNotify);
      db.client.releaseConnection(conn);
    }
    conn = null;
  }
  return {
    async next(ms: number, signal: AbortSignal): Promise<void> {
      if (!pending) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            wake = null;
            resolve();
          };
          const timer = setTimeout(done, ms);
          wake = done;
          signal.addEventListener('abort', done, { once: true });
        });
      }
      pending = false;
    },
    async close(): Promise<void> {
      if (!conn) return;
      conn.removeListener('notification', onNotify);
      await conn.query('UNLISTEN outbox_events').catch(() => undefined);
      db.client.releaseConnection(conn);
      conn = null;
    },
  };
}

export function createWebhookRelayActivities({ db, temporal }: WebhookDeps, opts: WebhookOptions) {
  /**
   * Claims undispatched outbox rows, in turns by workspace (lib/outbox.ts claimUndispatched;
   * SKIP LOCKED: concurrent relays take disjoint rows), writes one delivery row per matching
   * endpoint, wakes each endpoint with a live delivery, then stamps the rows an endpoint took
   * dispatched and deletes the others. Delivery rows are written outside the claim transaction
   * so the workflows see them at once; if anything fails before the stamp, the rows are claimed
   * again and both the inserts and the starts are no-ops the second time.
   */
  async function relayBatch(client: Client, taskQueue: string, heartbeat: () => void): Promise<{ events: number; started: number }> {
    return db.transaction(async (trx) => {
      const events = await claimUndispatched(trx, opts.relayBatchSize);
      if (events.length === 0) return { events: 0, started: 0 };
      const seqs = events.map((e) => e.seq);
      // spec 6: the workspace's endpoints subscribed to the type, narrowed to their project when
      // bound to one, and only those that existed when the event happened. Inactive endpoints
      // are matched too: spec 3.5 records their events as permanently failed.
      const matches = (
        await db.raw(
          `
        select ev.id as event_id, ev.workspace_id, ev.project_id, ev.type, ev.created_at, w.id as endpoint_id, w.is_active, w.disabled_reason
        from outbox_events ev
        join webhook_endpoints w on w.workspace_id = ev.workspace_id and w.deleted_at is null
          and ev.type = any(w.events) and (w.project_id is null or w.project_id = ev.project_id) and w.created_at <= ev.created_at
        where ev.seq = any(?::bigint[])`,
          [seqs],
        )
      ).rows as Array<{
        event_id: string;
        workspace_id: string;
        project_id: string | null;
        type: string;
        created_at: Date;
        endpoint_id: string;
        is_active: boolean;
        disabled_reason: string | null;
      }>;
      let started = 0;
      if (matches.length) {
        const rows = matches.map((m) => ({
          id: newId('webhookDelivery'),
          workspace_id: m.workspace_id,
          endpoint_id: m.endpoint_id,
          event_id: m.event_id,
          event_type: m.type,
          event_created_at: m.created_at,
          status: m.is_active ? 'pending' : 'failed',
          failure_reason: m.is_active ? null : inactiveReason(m.disabled_reason),
          failed_at: m.is_active ? null : new Date(),
        }));
        for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
          await db('webhook_deliveries')
            .insert(rows.slice(i, i + INSERT_CHUNK))
            .onConflict(['event_id', 'endpoint_id'])
            .ignore();
        }
        // One wake-up per endpoint and batch, whatever the number of its new deliveries. The rows
        // are committed above, so the pass the signal triggers sees them. A batch claimed again
        // after a crash signals again: harmless.
        const wake = new Map<string, string>();
        for (const m of matches) if (m.is_active) wake.set(m.endpoint_id, m.workspace_id);
        // A pass already running for the endpoint takes the new rows at once on this NOTIFY
        // (deliverDueWebhooks); the signal below covers a workflow that is waiting or closed.
        if (wake.size) await db.raw(`select pg_notify('webhook_deliveries', x) from unnest(?::text[]) x`, [[...wake.keys()]]);
        await pLimit(opts.startConcurrency).map([...wake], async ([endpointId, workspaceId]) => {
          await wakeEndpoint(client, taskQueue, endpointId, workspaceId);
          started++;
          heartbeat();
        });
      }
      // An event no endpoint took is deleted, not stamped: an endpoint only ever takes events
      // made after it, so nothing can deliver it later (docs/webhooks.md "Retention"). A
      // workspace without endpoints leaves nothing behind. Retention 0 keeps every event.
      const matched = new Set(matches.map((m) => m.event_id));
      const kept = (e: (typeof events)[number]) => opts.outboxRetentionDays <= 0 || matched.has(e.id);
      await trx.raw(
        `with stamped as (update outbox_events set dispatched_at = now() where seq = any(?::bigint[]))
         delete from outbox_events where seq = any(?::bigint[])`,
        [events.filter(kept).map((e) => e.seq), events.filter((e) => !kept(e)).map((e) => e.seq)],
      );
      return { events: events.length, started };
    });
  }

  /**
   * While the outbox is drained: at most one batch of expired events deleted (lib/outbox.ts
   * pruneOutbox), then again at the next idle turn while a whole batch went, else after
   * `pruneEveryMs`. Relaying always comes first: a burst is never held up by the deletion.
   */
  let nextPruneAt = 0;
  async function pruneWhenDue(): Promise<void> {
    if (opts.outboxRetentionDays <= 0 || Date.now() < nextPruneAt) return;
    try {
      const deleted = await pruneOutbox(db, opts.outboxRetentionDays, opts.relayBatchSize);
      if (deleted < opts.relayBatchSize) nextPruneAt = Date.now() + opts.pruneEveryMs;
    } catch (err) {
      // Retention is housekeeping: a failed deletion waits for the next turn, relaying goes on.
      Context.current().log.warn('outbox retention: deletion failed', { error: String(err) });
      nextPruneAt = Date.now() + opts.pruneEveryMs;
    }
  }

  return {
    /**
     * The outbox relay: runs for up to `maxRunMs`, relaying batch after batch, sleeping until a
     * NOTIFY or the poll interval when the outbox is drained. Delivery workflows start on the
     * relay's own task queue.
     */
    async relayOutbox(input: { maxRunMs: number }): Promise<{ events: number; started: number }> {
      const ctx = Context.current();
      const client = await temporal();
      const listener = await outboxListener(db);
      const until = Date.now() + input.maxRunMs;
      const total = { events: 0, started: 0 };
      const heartbeat = () => ctx.heartbeat(total);
      try {
        while (Date.now() < until && !ctx.cancellationSignal.aborted) {
          heartbeat();
          const r = await relayBatch(client, ctx.info.taskQueue, heartbeat);
          total.events += r.events;
          total.started += r.started;
          if (r.events < opts.relayBatchSize) {
            await pruneWhenDue();
            await listener.next(opts.relayPollMs, ctx.cancellationSignal);
          }
        }
      } finally {
        await listener.close();
      }
      // Cancelled (relay workflow cancelled, worker shutting down): say so, so the workflow
      // either stops or has the run retried on another worker. The reason is a CancelledFailure.
      if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
      return total;
    },
  };
}
