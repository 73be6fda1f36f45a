import type { Knex } from 'knex';
import { decrypt } from '../lib/crypto';
import { keyedListener } from '../lib/notifications';
import { OPEN_COUNT_CAP } from '../lib/temporal/contracts/deliverWebhook';
import { webhookPayload } from '../lib/webhooks/payload';
import { retryDelayMs, withJitter } from '../lib/webhooks/schedule';
import { sendWebhook, type SendResult } from '../lib/webhooks/send';
import { SIGNATURE_HEADER, signatureHeader } from '../lib/webhooks/signature';
import type { AttemptResult, DeliveryPassResult, WebhookDeps, WebhookEndpointInput, WebhookOptions } from './webhooks';

// The delivery pass of an endpoint's workflow (docs/webhooks.md "How it runs"): its due
// deliveries in event order, signed and sent, each attempt recorded with the endpoint's failure
// streak (spec 6 rules 2-3), woken by the relay's NOTIFY while it lingers.

const USER_AGENT = 'ContentScheduler-Webhooks/1.0';

interface EndpointContext {
  url: string;
  is_active: boolean;
  disabled_reason: string | null;
  deleted_at: Date | null;
  secret_enc: string | null;
  previous_secret_enc: string | null;
  previous_secret_expires_at: Date | null;
}

interface DueDelivery {
  id: string;
  attempt_count: number;
  e_id: string | null;
  e_workspace_id: string;
  e_project_id: string | null;
  e_type: string;
  e_data: Record<string, unknown>;
  e_created_at: Date;
}

/**
 * A pass's due deliveries of one endpoint, oldest event first (bindings: endpoint id, the ids
 * the pass has in flight, limit).
 * Events committed by one transaction share their `created_at`; among them the outbox `seq` is
 * the order they were written in (a create that also schedules emits `post.created` first).
 * Served by the partial index webhook_deliveries_due_idx (migration 20261127300000), which holds
 * open rows only, so the pass never reads the endpoint's delivered history.
 */
export const DUE_DELIVERIES_SQL = `
  select d.id, d.attempt_count, e.id as e_id, e.workspace_id as e_workspace_id, e.project_id as e_project_id,
    e.type as e_type, e.data as e_data, e.created_at as e_created_at
  from webhook_deliveries d
  left join outbox_events e on e.id = d.event_id
  where d.endpoint_id = ? and d.status in ('pending', 'retrying') and (d.next_attempt_at is null or d.next_attempt_at <= now())
    and d.id <> all(?::text[])
  order by d.event_created_at, e.seq, d.id
  limit ?`;

/**
 * The endpoint's queue as a pass ends (bindings: endpoint id, twice), both from the same partial
 * index: when its earliest open delivery is due, and how many are open (its queue depth, up to
 * OPEN_COUNT_CAP + 1), which the workflow shows an operator (docs/operations.md).
 */
export const QUEUE_SQL = `select
  (select min(coalesce(next_attempt_at, now())) from webhook_deliveries where endpoint_id = ? and status in ('pending', 'retrying')) as next,
  (select count(*)::int from (select 1 from webhook_deliveries where endpoint_id = ? and status in ('pending', 'retrying') limit ${OPEN_COUNT_CAP + 1}) o) as open`;

/**
 * A pass's wake-ups: `NOTIFY webhook_deliveries, '<endpointId>'` from the relay (relayBatch), on
 * one LISTEN connection per worker process (lib/notifications.ts). Without it (LISTEN failed) a
 * pass simply ends when its queue runs dry, as the workflow's signal still brings the next pass.
 */
export const deliveryWakeListener = (db: Knex) => keyedListener(db, 'webhook_deliveries');

/** The failure reason of a delivery to an endpoint that is disabled (spec 3.5: recorded as permanently failed). */
export function inactiveReason(disabledReason: string | null): string {
  return `endpoint_inactive: ${disabledReason ?? 'the endpoint is disabled'}`.slice(0, 1000);
}

export function createWebhookDeliveryActivities({ db }: WebhookDeps, opts: WebhookOptions) {
  const deliveryWakes = deliveryWakeListener(db);

  /** Permanently failed without an attempt, several at once (the pass of a deleted or inactive endpoint). */
  async function closeDeliveries(ids: string[], reason: string): Promise<number> {
    if (!ids.length) return 0;
    return db('webhook_deliveries')
      .whereIn('id', ids)
      .whereIn('status', ['pending', 'retrying'])
      .update({ status: 'failed', failure_reason: reason, failed_at: db.fn.now(), next_attempt_at: null, updated_at: db.fn.now() });
  }

  /**
   * Records the attempt and moves the delivery on, each path one statement (data-modifying
   * CTEs run exactly once, atomically), so a busy worker holds a pooled connection for one
   * round trip. Only a non-terminal delivery row moves, so a repeated activity run can neither
   * count a failure twice nor undo a terminal state.
   */
  async function recordAttempt(
    deliveryId: string,
    attempt: number,
    startedAt: Date,
    r: SendResult,
    retryInMs: number | null,
  ): Promise<AttemptResult & { endpointDisabled?: boolean }> {
    const recordIt = `
      with attempt_row as (
        insert into webhook_delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code, outcome, error, remote_address)
        values (:id, :attempt, :startedAt, :durationMs, :statusCode, :outcome, :error, :remoteAddress)
        on conflict (delivery_id, attempt) do update set started_at = excluded.started_at, duration_ms = excluded.duration_ms,
          status_code = excluded.status_code, outcome = excluded.outcome, error = excluded.error, remote_address = excluded.remote_address
      )`;
    const params = {
      id: deliveryId,
      attempt,
      startedAt,
      durationMs: r.durationMs,
      statusCode: r.statusCode,
      outcome: r.outcome,
      error: r.error,
      remoteAddress: r.remoteAddress,
    };
    const open = `where id = :id and status in ('pending', 'retrying')`;
    if (r.outcome === 'delivered') {
      // spec 6 rule 3: a success ends the streak. Rows with nothing to change are skipped so
      // that busy endpoints do not serialise every delivery on their row lock.
      await db.raw(
        `${recordIt},
        moved as (
          update webhook_deliveries set status = 'delivered', attempt_count = :attempt, delivered_at = now(), next_attempt_at = null, updated_at = now()
          ${open} returning endpoint_id
        )
        update webhook_endpoints set consecutive_failures = 0, last_success_at = now()
        where id in (select endpoint_id from moved)
          and (consecutive_failures > 0 or last_success_at is null or last_success_at < now() - interval '1 minute')`,
        params,
      );
      return { outcome: 'delivered' };
    }
    const error = r.error ?? 'unknown';
    if (retryInMs !== null) {
      await db.raw(
        `${recordIt}
        update webhook_deliveries set status = 'retrying', attempt_count = :attempt, last_error = :error,
          next_attempt_at = now() + make_interval(secs => :waitS), updated_at = now()
        ${open}`,
        { ...params, error, waitS: retryInMs / 1000 },
      );
      return { outcome: 'retry', error };
    }
    // spec 6 rule 3: the streak grows by one per permanently failed delivery, in the same
    // statement; concurrent deliveries queue on the endpoint row, so no increment is lost, and
    // the one reaching the threshold disables the endpoint. In SET every column reads its value
    // from before the update.
    const reason = `retries_exhausted: ${attempt} attempt${attempt === 1 ? '' : 's'} failed; last: ${error}`.slice(0, 1000);
    const disabled = `repeated_failures: ${opts.disableAfterFailures} consecutive deliveries failed permanently; last: ${reason}`.slice(
      0,
      1000,
    );
    const moved = await db.raw(
      `${recordIt},
      moved as (
        update webhook_deliveries set status = 'failed', attempt_count = :attempt, last_error = :error, failure_reason = :reason,
          failed_at = now(), next_attempt_at = null, updated_at = now()
        ${open} returning endpoint_id
      )
      update webhook_endpoints set
        consecutive_failures = consecutive_failures + 1,
        last_failure_at = now(),
        disabled_reason = case when is_active and consecutive_failures + 1 >= :threshold then :disabled else disabled_reason end,
        disabled_at = case when is_active and consecutive_failures + 1 >= :threshold then now() else disabled_at end,
        updated_at = case when is_active and consecutive_failures + 1 >= :threshold then now() else updated_at end,
        is_active = case when is_active and consecutive_failures + 1 >= :threshold then false else is_active end
      where id in (select endpoint_id from moved)
      returning is_active`,
      { ...params, error, reason, disabled, threshold: opts.disableAfterFailures },
    );
    return { outcome: 'failed', reason, endpointDisabled: (moved.rows as Array<{ is_active: boolean }>)[0]?.is_active === false };
  }

  return {
    /**
     * One pass of an endpoint's delivery workflow: every delivery of the endpoint that is due
     * (new, or its retry wait over), oldest event first, at most `passSize`; attempts start in
     * that order, `endpointConcurrency` at a time. While a slot is free the pass takes newly
     * due deliveries too: when its queue runs dry it asks the table again, and when that finds
     * nothing it waits up to `passLingerMs` for the relay's `NOTIFY webhook_deliveries` naming
     * this endpoint, so an endpoint receiving a steady stream is served by one pass after
     * another without a signal and a workflow task per event. No attempt starts after
     * `passBudgetMs`. The endpoint is read at the start and again at every refill, so a disable,
     * delete, URL change or secret rotation applies to the attempts started after it. Receiver
     * and network failures are recorded outcomes; an exception means our own infrastructure
     * failed and the pass is retried.
     */
    async deliverDueWebhooks(input: WebhookEndpointInput): Promise<DeliveryPassResult> {
      const pass: DeliveryPassResult = { attempted: 0, delivered: 0, retrying: 0, failed: 0, closed: 0, more: false, nextDueAtMs: null };
      const began = Date.now();
      const readEndpoint = async () =>
        (await db('webhook_endpoints')
          .where({ id: input.endpointId })
          .first(
            'url',
            'is_active',
            'disabled_reason',
            'deleted_at',
            'secret_enc',
            'previous_secret_enc',
            'previous_secret_expires_at',
          )) as EndpointContext | undefined;
      const closeReasonOf = (e: EndpointContext | undefined) =>
        !e || e.deleted_at || !e.secret_enc
          ? 'endpoint_deleted: the endpoint was deleted before delivery'
          : !e.is_active
            ? inactiveReason(e.disabled_reason)
            : null;
      const secretsOf = (e: EndpointContext) => {
        const secrets = [decrypt(e.secret_enc!)];
        if (e.previous_secret_enc && e.previous_secret_expires_at && e.previous_secret_expires_at.getTime() > Date.now())
          secrets.push(decrypt(e.previous_secret_enc));
        return secrets;
      };
      const inFlight = new Set<string>();
      const dueNow = async (limit: number) =>
        (await db.raw(DUE_DELIVERIES_SQL, [input.endpointId, [...inFlight], limit])).rows as DueDelivery[];

      let ep = await readEndpoint();
      const first = await dueNow(opts.passSize);
      const closeReason = closeReasonOf(ep);
      if (closeReason) {
        if (first.length) pass.lastFailure = { atMs: Date.now(), error: closeReason };
        pass.closed += await closeDeliveries(
          first.map((d) => d.id),
          closeReason,
        );
        if (first.length === opts.passSize) pass.more = true;
      } else {
        let secrets = secretsOf(ep!);
        const queue: DueDelivery[] = [];
        let taken = 0;
        let stop = false;
        const enqueue = async (rows: DueDelivery[]) => {
          const missing = rows.filter((d) => !d.e_id);
          pass.closed += await closeDeliveries(
            missing.map((d) => d.id),
            'event_missing: the event is no longer stored',
          );
          for (const d of rows) if (d.e_id) queue.push(d);
          taken += rows.length;
        };
        await enqueue(first);
        if (first.length === opts.passSize) pass.more = true;

        const wake = opts.passLingerMs > 0 && !pass.more ? await deliveryWakes.subscribe(input.endpointId) : null;
        // One refill at a time; the slots that find the queue empty wait for the same one. A refill
        // that finds nothing waits for the relay's NOTIFY, or for a retry of this pass falling
        // due, and gives up after `passLingerMs` without either (then the workflow waits).
        let nextRetryAt = Infinity;
        let refilling: Promise<boolean> | null = null;
        const refill = async (): Promise<boolean> => {
          const idleSince = Date.now();
          for (;;) {
            const now = Date.now();
            if (stop || taken >= opts.passSize || now - began > opts.passBudgetMs || now - idleSince >= opts.passLingerMs) return false;
            // Cleared before the query: a NOTIFY arriving after it is kept for the wait below.
            wake!.take();
            ep = await readEndpoint();
            if (closeReasonOf(ep)) {
              // Deleted or disabled meanwhile: the next pass closes what is left.
              stop = true;
              pass.more = true;
              return false;
            }
            secrets = secretsOf(ep!);
            const rows = await dueNow(opts.passSize - taken);
            if (rows.length) {
              await enqueue(rows);
              if (queue.length) return true;
              continue;
            }
            const waitMs = Math.min(
              idleSince + opts.passLingerMs - Date.now(),
              began + opts.passBudgetMs - Date.now(),
              Math.max(20, nextRetryAt - Date.now()),
            );
            if (waitMs > 0) await wake!.next(waitMs);
          }
        };
        const next = async (): Promise<DueDelivery | null> => {
          for (;;) {
            // Disabled by a permanent failure of this pass, or out of time: the rest stays due.
            if (stop || Date.now() - began > opts.passBudgetMs) {
              if (queue.length) pass.more = true;
              return null;
            }
            const d = queue.shift();
            if (d) return d;
            if (!wake) return null;
            refilling ??= refill().finally(() => {
              refilling = null;
            });
            if (!(await refilling) && !queue.length) return null;
          }
        };
        const attempt = async (d: DueDelivery) => {
          const current = ep!;
          const n = d.attempt_count + 1;
          // Math.random is fine here: the wait is recorded in the row, never replayed.
          const retryInMs = n < opts.maxAttempts ? withJitter(retryDelayMs(n, opts.retryBaseMs), Math.random()) : null;
          const body = JSON.stringify(
            webhookPayload({
              id: d.e_id!,
              workspace_id: d.e_workspace_id,
              project_id: d.e_project_id,
              type: d.e_type,
              data: d.e_data,
              created_at: d.e_created_at,
            }),
          );
          const headers = {
            'Content-Type': 'application/json',
            'User-Agent': USER_AGENT,
            [SIGNATURE_HEADER]: signatureHeader(secrets, Math.floor(Date.now() / 1000), body),
            'Webhook-Id': d.e_id!,
            'Webhook-Attempt': String(n),
          };
          const startedAt = new Date();
          const sent = await sendWebhook(current.url, body, headers, {
            timeoutMs: opts.timeoutMs,
            allowLoopback: opts.allowLoopback,
            resolve: opts.resolve,
          });
          const r = await recordAttempt(d.id, n, startedAt, sent, retryInMs);
          if (r.outcome !== 'delivered')
            pass.lastFailure = { atMs: startedAt.getTime(), error: r.outcome === 'retry' ? r.error : r.reason };
          pass.attempted++;
          if (r.outcome === 'delivered') pass.delivered++;
          else if (r.outcome === 'retry') {
            pass.retrying++;
            nextRetryAt = Math.min(nextRetryAt, startedAt.getTime() + sent.durationMs + retryInMs!);
          } else pass.failed++;
          if (r.endpointDisabled) {
            stop = true;
            pass.more = true;
          }
        };
        try {
          // `endpointConcurrency` slots, each taking the next delivery in event order when free.
          await Promise.all(
            Array.from({ length: Math.max(1, opts.endpointConcurrency) }, async () => {
              for (let d = await next(); d; d = await next()) {
                inFlight.add(d.id);
                try {
                  await attempt(d);
                } finally {
                  inFlight.delete(d.id);
                }
              }
            }),
          );
        } finally {
          wake?.close();
        }
      }
      const queue = (await db.raw(QUEUE_SQL, [input.endpointId, input.endpointId])).rows[0] as
        { next: Date | null; open: number } | undefined;
      pass.open = queue?.open ?? 0;
      if (!pass.more) pass.nextDueAtMs = queue?.next ? queue.next.getTime() : null;
      return pass;
    },
  };
}
