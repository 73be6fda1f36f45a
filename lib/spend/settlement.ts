import type { Knex } from 'knex';
import { log } from '../logger';
import { Job } from '../models';

// Settlement: a finished job's reservation replaced by what it really cost (settleJobSpend,
// the last statement of the transaction that makes the job final), and the sweep that settles
// the jobs whose settlement did not follow (settleUnsettledJobs, the reconciler's pass and `bin/admin jobs
// settle-spend`). The meters are ./meters.ts, the reservations ./reservations.ts.

/**
 * Replaces a job's reservation with what it really cost, once, in one statement: the claim
 * (`spend_settled_at`, set only while null), then the week row, then the day row. Run as the
 * last statement of the transaction that makes the job final (finishingJob, the cancel), so the
 * workspace's meter rows are held from it to that COMMIT only; the reconciler's pass settles a
 * final job left unsettled (settleUnsettledJobs). Until then the job's reservation still counts
 * against the meters. The cost lands in the buckets the job reserved in (the day and week it
 * was accepted).
 *
 * Only a job in a final state is settled, unless `anyStatus` (a QUEUED job withdrawn together
 * with its reservation, in the caller's transaction).
 */
export async function settleJobSpend(q: Knex | Knex.Transaction, jobId: string, opts: { anyStatus?: boolean } = {}): Promise<boolean> {
  const r = await q.raw(
    `with claimed as (
       update jobs set spend_settled_at = now()
        where id = ? and spend_settled_at is null and reserved_cents is not null
          ${opts.anyStatus ? '' : `and status in ('DONE', 'FAILED', 'CANCELLED')`}
       returning workspace_id, spend_day, budget_key, budget_week, reserved_cents, cost_cents
     ), week as (
       update ai_budget_weeks b
          set reserved_cents = greatest(0, b.reserved_cents - c.reserved_cents), spent_cents = b.spent_cents + c.cost_cents, updated_at = now()
         from claimed c
        where b.workspace_id = c.workspace_id and b.budget_key = c.budget_key and b.week_start = c.budget_week
       returning 1
     ), day as (
       update ai_spend_days d
          set reserved_cents = greatest(0, d.reserved_cents - c.reserved_cents), spent_cents = d.spent_cents + c.cost_cents, updated_at = now()
         from claimed c
        where d.workspace_id = c.workspace_id and d.bucket_date = c.spend_day
          and (select count(*) from week) >= 0 -- the week row first, as the reservation takes them
       returning 1
     )
     select (select count(*) from claimed)::int as claimed, (select count(*) from day)::int as days`,
    [jobId],
  );
  return (r.rows[0] as { claimed: number }).claimed > 0;
}

/** Which unsettled final jobs a pass or a listing takes. */
export interface UnsettledFilter {
  /** Only jobs whose final state is at least this old (their own finisher settles them first). */
  olderThanSeconds?: number;
  workspaceId?: string;
  limit?: number;
}

/** Final jobs whose spend is not settled, oldest first: the rows of the partial index `jobs_unsettled`. */
function unsettled(q: Knex, filter: UnsettledFilter) {
  const query = (filter.workspaceId === undefined ? q('jobs') : Job.knexForWorkspace(filter.workspaceId, q))
    .whereNull('spend_settled_at')
    .whereNotNull('reserved_cents')
    .whereIn('status', ['DONE', 'FAILED', 'CANCELLED'])
    .whereRaw('completed_at < now() - make_interval(secs => ?)', [filter.olderThanSeconds ?? 0]);
  return query;
}

export interface UnsettledJob {
  id: string;
  workspace_id: string;
  type: string;
  status: string;
  completed_at: Date;
  reserved_cents: number;
  cost_cents: number;
  age_seconds: number;
}

/**
 * What settlement has yet to do (`bin/admin jobs unsettled`): the oldest `limit` unsettled final
 * jobs, with how many there are in all and the reservations they still hold on the meters.
 */
export async function listUnsettledJobs(
  q: Knex,
  filter: UnsettledFilter = {},
): Promise<{ total: number; reservedCents: number; jobs: UnsettledJob[] }> {
  const limit = filter.limit ?? 50;
  const [totals, jobs] = await Promise.all([
    unsettled(q, filter).first(q.raw('count(*)::int as total'), q.raw('coalesce(sum(reserved_cents), 0)::int as reserved')),
    limit === 0
      ? []
      : unsettled(q, filter)
          .orderBy([{ column: 'completed_at' }, { column: 'id' }])
          .limit(limit)
          .select(
            'id',
            'workspace_id',
            'type',
            'status',
            'completed_at',
            'reserved_cents',
            'cost_cents',
            q.raw('floor(extract(epoch from now() - completed_at))::int as age_seconds'),
          ),
  ]);
  const t = totals as { total: number; reserved: number };
  return { total: t.total, reservedCents: t.reserved, jobs: jobs as UnsettledJob[] };
}

/**
 * The reconciler's part of settlement: jobs whose final state committed but whose settlement
 * did not follow (the process died in between, Postgres refused the second statement). Each is
 * settled as its own finisher would have; the claim makes a concurrent settlement harmless.
 * Operators run the same pass with `bin/admin jobs settle-spend` (`by: 'operator'`: no grace,
 * optionally one workspace; the command prints the count, so the line is info, not a warning).
 */
export async function settleUnsettledJobs(
  q: Knex,
  olderThanSeconds = 30,
  opts: { workspaceId?: string; limit?: number; by?: 'reconciler' | 'operator' } = {},
): Promise<number> {
  const rows: Array<{ id: string }> = await unsettled(q, { workspaceId: opts.workspaceId, olderThanSeconds })
    .orderBy('completed_at')
    .limit(opts.limit ?? 500)
    .select('id');
  let settled = 0;
  for (const { id } of rows) if (await settleJobSpend(q, id)) settled++;
  const by = opts.by ?? 'reconciler';
  if (settled)
    (by === 'reconciler' ? log.warn : log.info)(`job spend settled by the ${by} (its settlement did not follow the final state)`, {
      jobs: settled,
      ...(opts.workspaceId ? { workspaceId: opts.workspaceId } : {}),
    });
  return settled;
}
