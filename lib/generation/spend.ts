import type { Knex } from 'knex';
import { config, planLimits } from '../config';
import { ApiError } from '../errors';
import { log } from '../logger';
import { dayStartUtc, weekStartUtc } from '../time';
import { effectiveLimit } from '../limits';
import { AiBudgetWeek, AiSpendDay, Job } from '../models';
import type { JobType } from './jobs';

// The two meters in front of every AI job (spec 2.16, 7.2, 8), in Postgres because they guard
// money: Redis "holds only what may be lost" (ARCHITECTURE.md).
//
// - Daily API AI-spend cap: per workspace and UTC day. Every job that calls a paid model (post
//   and image generation, file source ingest, file knowledge ingest) reserves its kind's
//   estimate (reserveCentsOf) before it is queued; the job's real cost replaces the reservation
//   when it finishes. Refused (402 spend_cap_exceeded) when spent + reserved + estimate > cap.
// - Weekly AI budget: per project (personal brands, amplifiers) or per workspace pool (company
//   pages), week starting Monday 00:00 UTC. Metered the same way; refused (402
//   usage_limit_exceeded) only under enforcement `block`, once usage has reached 100 %.
//
// The same rows answer GET /v1/usage through `wouldRefuse`, the rule the reservation applies in
// SQL, so `canGenerate` is false exactly when a generation would be refused.

export const ENFORCEMENTS = ['off', 'shadow', 'warn', 'block'] as const;
export type Enforcement = (typeof ENFORCEMENTS)[number];

/** The budget key of the workspace pool; project budgets are keyed by project id. */
export const POOL_KEY = 'pool';

export type BudgetScope = 'ai_project' | 'ai_workspace_pool';
export type BlockedBy = 'weekly_ai_budget' | 'daily_api_spend_cap';

export interface AiLimits {
  /** Effective plan: an agency-billed workspace carries the agency's plan (spec 5.5). */
  plan: string;
  enforcement: Enforcement;
  /** Per project and for the pool; null = unlimited. */
  weeklyBudgetCents: number | null;
  /** null = unlimited. */
  dailyCapCents: number | null;
}

export interface BudgetTarget {
  key: string;
  scope: BudgetScope;
}

export interface Periods {
  /** UTC day of the spend bucket, YYYY-MM-DD. */
  day: string;
  /** Monday of the budget week, YYYY-MM-DD. */
  week: string;
  /** Next Monday 00:00 UTC. */
  weekResetsAt: string;
}

export interface ApiSpend {
  bucketDate: string;
  capCents: number | null;
  spentCents: number;
  remainingCents: number | null;
}

const ymd = (d: Date) => d.toISOString().slice(0, 10);

export function periodsAt(now: Date): Periods {
  const week = weekStartUtc(now);
  return { day: ymd(dayStartUtc(now)), week: ymd(week), weekResetsAt: new Date(week.getTime() + 7 * 86_400_000).toISOString() };
}

/**
 * Company pages have no budget of their own: they draw from the workspace pool (spec 4.8 usage),
 * as does work of no project (a workspace-wide knowledge document). budgetKeySql is the same
 * rule in SQL.
 */
export function budgetTargetOf(project: { id: string; type: string } | null): BudgetTarget {
  return !project || project.type === 'COMPANY_PAGE'
    ? { key: POOL_KEY, scope: 'ai_workspace_pool' }
    : { key: project.id, scope: 'ai_project' };
}

/** The budget target in SQL over a project row aliased `project` (budgetTargetOf's rule). */
export const budgetKeySql = (project: string) => `case when ${project}.type = 'COMPANY_PAGE' then '${POOL_KEY}' else ${project}.id end`;

/**
 * What AiLimits is made of, read by joining the workspace `w`, its billing workspace `b` and the
 * target's `ai_budgets` row `ab` (aliases prefixed by `prefix`), as loadAiLimits does and a
 * query of the project that also wants its limits (findProjectWithAiLimits) can.
 */
export function aiLimitColumns(prefix = ''): string[] {
  return [
    `${prefix}w.plan as ${prefix}plan`,
    `${prefix}b.plan as ${prefix}billing_plan`,
    `${prefix}w.ai_enforcement as ${prefix}ai_enforcement`,
    `${prefix}w.weekly_ai_budget_cents as ${prefix}weekly_ai_budget_cents`,
    `${prefix}w.daily_spend_cap_cents as ${prefix}daily_spend_cap_cents`,
    `${prefix}ab.weekly_budget_cents as ${prefix}target_budget_cents`,
  ];
}

/** The limits of a row read with aiLimitColumns(prefix). */
export function aiLimitsOf(row: Record<string, any>, prefix = ''): AiLimits {
  const plan: string = row[`${prefix}billing_plan`] ?? row[`${prefix}plan`];
  const limits = planLimits(plan);
  const stored = row[`${prefix}ai_enforcement`];
  // An unknown stored value is read as the strictest mode rather than silently switching refusals off.
  const enforcement = (ENFORCEMENTS as readonly string[]).includes(stored) ? (stored as Enforcement) : 'block';
  return {
    plan,
    enforcement,
    // A target's own budget, else the workspace's, overrides the plan (lib/limits.ts: null there
    // means "the plan's value", UNLIMITED_OVERRIDE "unlimited").
    weeklyBudgetCents: effectiveLimit(
      row[`${prefix}target_budget_cents`] ?? row[`${prefix}weekly_ai_budget_cents`],
      limits.weeklyAiBudgetCents,
    ),
    dailyCapCents: effectiveLimit(row[`${prefix}daily_spend_cap_cents`], limits.dailySpendCapCents),
  };
}

/**
 * The limits in force for a workspace; with `target`, its weekly budget is that target's: an
 * operator-set `ai_budgets` row for the project or the pool, else the workspace's, else the plan's.
 */
export async function loadAiLimits(q: Knex | Knex.Transaction, workspaceId: string, target?: BudgetTarget): Promise<AiLimits> {
  const w = await q('workspaces as w')
    .leftJoin('workspaces as b', 'b.id', 'w.billing_workspace_id')
    .leftJoin('ai_budgets as ab', (j) => j.on('ab.workspace_id', 'w.id').andOn('ab.budget_key', q.raw('?', [target?.key ?? ''])))
    .where('w.id', workspaceId)
    .first(aiLimitColumns());
  if (!w) throw new Error(`workspace ${workspaceId} does not exist`);
  return aiLimitsOf(w);
}

/** spec 2.16: an integer 0-100, always 0 when unlimited. Floored, so 100 means "reached". */
export function percentUsed(usedCents: number, budgetCents: number | null): number {
  if (budgetCents === null) return 0;
  if (budgetCents <= 0) return 100;
  return Math.min(100, Math.floor((usedCents * 100) / budgetCents));
}

export function apiSpendOf(day: string, capCents: number | null, usedCents: number): ApiSpend {
  return { bucketDate: day, capCents, spentCents: usedCents, remainingCents: capCents === null ? null : Math.max(0, capCents - usedCents) };
}

/**
 * The admission rule. `weekUsed` and `dayUsed` count settled cost plus the reservations of jobs
 * still in flight. The weekly budget is checked first: it resets later than the daily cap, so it
 * is the more useful reason to give. reserveGenerationSpend applies the same two conditions in
 * SQL, where they must hold under concurrency; a change here changes both.
 */
export function wouldRefuse(
  limits: AiLimits,
  weekUsed: number,
  dayUsed: number,
  estimateCents = config.llm.reserveCents,
): BlockedBy | null {
  if (limits.enforcement === 'block' && limits.weeklyBudgetCents !== null && weekUsed >= limits.weeklyBudgetCents)
    return 'weekly_ai_budget';
  if (limits.dailyCapCents !== null && dayUsed + estimateCents > limits.dailyCapCents) return 'daily_api_spend_cap';
  return null;
}

/** Settled cost plus open reservations of one weekly budget. */
export async function weekUsedCents(q: Knex | Knex.Transaction, workspaceId: string, key: string, week: string): Promise<number> {
  const row = await AiBudgetWeek.forWorkspace(workspaceId, q).where({ budget_key: key, week_start: week }).first().select('spent_cents', 'reserved_cents');
  return row ? row.spent_cents + row.reserved_cents : 0;
}

/** Settled cost plus open reservations of the workspace's spend day. */
export async function dayUsedCents(q: Knex | Knex.Transaction, workspaceId: string, day: string): Promise<number> {
  const row = await AiSpendDay.forWorkspace(workspaceId, q).where({ bucket_date: day }).first().select('spent_cents', 'reserved_cents');
  return row ? row.spent_cents + row.reserved_cents : 0;
}

export function usageLimitExceeded(
  target: BudgetTarget,
  projectId: string | null,
  used: number,
  limits: AiLimits,
  periods: Periods,
): ApiError {
  const pct = percentUsed(used, limits.weeklyBudgetCents);
  const whose = target.scope === 'ai_project' ? 'this project' : "the workspace's shared pool";
  // 402 like spend_cap_exceeded: both say "the AI money for this period is used up", and a
  // generic 429 handler would retry for days (docs/generation.md).
  return new ApiError(
    'usage_limit_exceeded',
    `The weekly AI budget of ${whose} is used up (${pct} %); it resets at ${periods.weekResetsAt}.`,
    { scope: target.scope, percentUsed: pct, resetsAt: periods.weekResetsAt, ...(projectId ? { projectId } : {}) },
  );
}

export function spendCapExceeded(spend: ApiSpend, estimateCents: number): ApiError {
  return new ApiError(
    'spend_cap_exceeded',
    `The daily API AI-spend cap of ${spend.capCents} cents is reached (${spend.spentCents} spent or reserved; this job reserves ${estimateCents}). It resets at 00:00 UTC.`,
    { ...spend, estimateCents },
  );
}

export interface Reservation {
  reservedCents: number;
  spendDay: string;
  budgetKey: string;
  budgetWeek: string;
}

/**
 * What a job of `type` reserves until its real cost is known: one config value per kind (spec
 * 4.4 and 8: about 5 cents for a post generation). Every kind is metered alike, so the daily cap
 * and the weekly budget hold whatever the money was spent on (docs/generation.md "Spend and budgets").
 */
export function reserveCentsOf(type: JobType): number {
  switch (type) {
    case 'POST_GENERATION':
      return config.llm.reserveCents;
    case 'IMAGE_GENERATION':
      return config.images.reserveCents;
    case 'SOURCE_INGEST':
      return config.sources.reserveCents;
    case 'KNOWLEDGE_INGEST':
      return config.knowledge.reserveCents;
  }
}

/** Where a job of `type` accepted now would reserve: the caller stores this on the job row. */
export function reservationFor(target: BudgetTarget, now: Date, type: JobType): Reservation {
  const periods = periodsAt(now);
  return { reservedCents: reserveCentsOf(type), spendDay: periods.day, budgetKey: target.key, budgetWeek: periods.week };
}

/** SQLSTATE of a refused reservation (migrations/20261128100000_ai_spend_statements.ts); the message names the meter. */
export const SPEND_REFUSED_SQLSTATE = 'AI402';

export interface ReservationRequest {
  workspaceId: string;
  target: BudgetTarget;
  projectId: string | null;
  limits: AiLimits;
  reservation: Reservation;
  now: Date;
}

/** The refusal of `blockedBy`, with the meter's usage as it reads now. */
async function refusal(q: Knex, input: ReservationRequest, blockedBy: BlockedBy): Promise<ApiError> {
  const { workspaceId, target, limits, reservation } = input;
  if (blockedBy === 'weekly_ai_budget')
    return usageLimitExceeded(
      target,
      target.scope === 'ai_project' ? input.projectId : null,
      await weekUsedCents(q, workspaceId, target.key, reservation.budgetWeek),
      limits,
      periodsAt(input.now),
    );
  const cap = limits.dailyCapCents;
  return spendCapExceeded(
    apiSpendOf(reservation.spendDay, cap, await dayUsedCents(q, workspaceId, reservation.spendDay)),
    reservation.reservedCents,
  );
}

/**
 * Reserves the estimate against both meters in the statement that records the job: `run` gets
 * the SQL call `reserve_ai_spend(...)` (with its bindings) to place in that statement, and
 * answers the row it returned with the call's value as `week_used_before`. A refusal raises
 * inside the statement, so the job's insert rolls back with it (a reservation never exists
 * without its job, and a refused request leaves nothing queued); it is thrown here as the 402.
 *
 * The statement commits on its own: the workspace's meter rows, which every reservation and
 * settlement of the workspace needs, are held from the function's upsert to that COMMIT with
 * no client round trip in between (bench/generation.ts). The function upserts the week row
 * before the day row, as settlement updates them, so the two never deadlock; each upsert's
 * condition is re-checked by Postgres against the newest row after waiting for a concurrent
 * lock, so simultaneous requests cannot both take the last cents.
 */
export async function reserveGenerationSpend<T extends { week_used_before: number }>(
  q: Knex,
  input: ReservationRequest,
  run: (call: { sql: string; bindings: readonly unknown[] }) => Promise<T>,
): Promise<T> {
  const { workspaceId, target, limits, reservation } = input;
  const estimate = reservation.reservedCents;
  const enforce = limits.enforcement === 'block' && limits.weeklyBudgetCents !== null;
  const cap = limits.dailyCapCents;
  // The function applies its conditions only to rows that already exist; a bucket's first
  // reservation meets the same rule here, with nothing used yet.
  if (enforce && limits.weeklyBudgetCents! <= 0) throw await refusal(q, input, 'weekly_ai_budget');
  if (cap !== null && estimate > cap) throw await refusal(q, input, 'daily_api_spend_cap');

  let row: T;
  try {
    row = await run({
      sql: 'reserve_ai_spend(?, ?, ?::date, ?::date, ?::int, ?::boolean, ?::int, ?::int)',
      bindings: [
        workspaceId,
        target.key,
        reservation.budgetWeek,
        reservation.spendDay,
        estimate,
        enforce,
        limits.weeklyBudgetCents ?? 0,
        cap,
      ],
    });
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code !== SPEND_REFUSED_SQLSTATE) throw err;
    throw await refusal(q, input, e.message?.includes('weekly_ai_budget') ? 'weekly_ai_budget' : 'daily_api_spend_cap');
  }
  const weekUsedBefore = row.week_used_before;
  if (!enforce && limits.enforcement !== 'off' && limits.weeklyBudgetCents !== null && weekUsedBefore >= limits.weeklyBudgetCents) {
    // shadow and warn never refuse (spec 8); they only tell operators what block would have done.
    (limits.enforcement === 'warn' ? log.warn : log.info)('weekly AI budget exhausted; not refused under this enforcement', {
      workspaceId,
      budgetKey: target.key,
      enforcement: limits.enforcement,
      usedCents: weekUsedBefore,
      budgetCents: limits.weeklyBudgetCents,
    });
  }
  return row;
}

/**
 * Replaces a job's reservation with what it really cost, once, in one statement committed on
 * its own: the claim (`spend_settled_at`, set only while null), then the week row, then the day
 * row, so the workspace's meter rows are held for that statement's COMMIT only. Called right
 * after the COMMIT of the job's final state (the final state and the settlement are not one
 * transaction); the reconciler's pass settles a job a crash left in between
 * (settleUnsettledJobs). Until then the job's reservation still counts against the meters. The
 * cost lands in the buckets the job reserved in (the day and week it was accepted).
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
