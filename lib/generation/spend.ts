import type { Knex } from 'knex';
import { config, planLimits } from '../config';
import { ApiError } from '../errors';
import { log } from '../logger';
import { dayStartUtc, weekStartUtc } from '../time';

// The two meters in front of every AI job (spec 2.16, 7.2, 8), in Postgres because they guard
// money: Redis "holds only what may be lost" (ARCHITECTURE.md).
//
// - Daily API AI-spend cap: per workspace and UTC day. Each generation reserves
//   config.llm.reserveCents before it is queued; the job's real cost replaces the reservation
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

/** Company pages have no budget of their own: they draw from the workspace pool (spec 4.8 usage). */
export function budgetTargetOf(project: { id: string; type: string }): BudgetTarget {
  return project.type === 'COMPANY_PAGE' ? { key: POOL_KEY, scope: 'ai_workspace_pool' } : { key: project.id, scope: 'ai_project' };
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
    .first(
      'w.plan',
      'b.plan as billing_plan',
      'w.ai_enforcement',
      'w.weekly_ai_budget_cents',
      'w.daily_spend_cap_cents',
      'ab.weekly_budget_cents as target_budget_cents',
    );
  if (!w) throw new Error(`workspace ${workspaceId} does not exist`);
  const plan: string = w.billing_plan ?? w.plan;
  const limits = planLimits(plan);
  // An unknown stored value is read as the strictest mode rather than silently switching refusals off.
  const enforcement = (ENFORCEMENTS as readonly string[]).includes(w.ai_enforcement) ? (w.ai_enforcement as Enforcement) : 'block';
  return {
    plan,
    enforcement,
    // Workspace columns override the plan; null there means "the plan's value", not "unlimited".
    weeklyBudgetCents: w.target_budget_cents ?? w.weekly_ai_budget_cents ?? limits.weeklyAiBudgetCents,
    dailyCapCents: w.daily_spend_cap_cents ?? limits.dailySpendCapCents,
  };
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
  const row = await q('ai_budget_weeks')
    .where({ workspace_id: workspaceId, budget_key: key, week_start: week })
    .first('spent_cents', 'reserved_cents');
  return row ? row.spent_cents + row.reserved_cents : 0;
}

/** Settled cost plus open reservations of the workspace's spend day. */
export async function dayUsedCents(q: Knex | Knex.Transaction, workspaceId: string, day: string): Promise<number> {
  const row = await q('ai_spend_days').where({ workspace_id: workspaceId, bucket_date: day }).first('spent_cents', 'reserved_cents');
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
    402,
    'usage_limit_exceeded',
    `The weekly AI budget of ${whose} is used up (${pct} %); it resets at ${periods.weekResetsAt}.`,
    { scope: target.scope, percentUsed: pct, resetsAt: periods.weekResetsAt, ...(projectId ? { projectId } : {}) },
  );
}

export function spendCapExceeded(spend: ApiSpend, estimateCents: number): ApiError {
  return new ApiError(
    402,
    'spend_cap_exceeded',
    `The daily API AI-spend cap of ${spend.capCents} cents is reached (${spend.spentCents} spent or reserved; a generation reserves ${estimateCents}). It resets at 00:00 UTC.`,
    { ...spend, estimateCents },
  );
}

export interface Reservation {
  reservedCents: number;
  spendDay: string;
  budgetKey: string;
  budgetWeek: string;
}

/** Where a generation accepted now would reserve: the caller stores this on the job row. */
export function reservationFor(target: BudgetTarget, now: Date): Reservation {
  const periods = periodsAt(now);
  return { reservedCents: config.llm.reserveCents, spendDay: periods.day, budgetKey: target.key, budgetWeek: periods.week };
}

/**
 * Reserves the estimate against both meters inside the caller's transaction (the one that
 * inserts the job, so a reservation never exists without its job), or throws the refusal and
 * the caller's transaction rolls everything back.
 *
 * One statement does both conditional upserts: Postgres re-evaluates each ON CONFLICT ... WHERE
 * against the newest row after waiting for a concurrent reservation's lock, so simultaneous
 * requests cannot both take the last cents; and as the last statement before COMMIT it holds
 * the two hot rows for one round trip rather than several (bench/generation.ts). The week row
 * is always locked before the day row, here and in settlement, so the two never deadlock.
 */
export async function reserveGenerationSpend(
  trx: Knex.Transaction,
  input: { workspaceId: string; target: BudgetTarget; projectId: string; limits: AiLimits; reservation: Reservation; now: Date },
): Promise<void> {
  const { workspaceId, target, limits, reservation } = input;
  const periods = periodsAt(input.now);
  const estimate = reservation.reservedCents;
  const enforce = limits.enforcement === 'block' && limits.weeklyBudgetCents !== null;
  const cap = limits.dailyCapCents;
  const refuseWeek = async () => {
    throw usageLimitExceeded(
      target,
      target.scope === 'ai_project' ? input.projectId : null,
      await weekUsedCents(trx, workspaceId, target.key, reservation.budgetWeek),
      limits,
      periods,
    );
  };
  const refuseDay = async () => {
    throw spendCapExceeded(apiSpendOf(reservation.spendDay, cap, await dayUsedCents(trx, workspaceId, reservation.spendDay)), estimate);
  };
  // The upserts below apply their conditions only to rows that already exist; a bucket's first
  // reservation meets the same rule here, with nothing used yet.
  if (enforce && limits.weeklyBudgetCents! <= 0) return refuseWeek();
  if (cap !== null && estimate > cap) return refuseDay();

  const r = await trx.raw(
    `with week as (
       insert into ai_budget_weeks as b (workspace_id, budget_key, week_start, reserved_cents) values (?, ?, ?, ?)
       on conflict (workspace_id, budget_key, week_start) do update
         set reserved_cents = b.reserved_cents + excluded.reserved_cents, updated_at = now()
         where not ?::boolean or b.spent_cents + b.reserved_cents < ?::int
       returning b.spent_cents + b.reserved_cents - ?::int as used_before
     ), day as (
       insert into ai_spend_days as d (workspace_id, bucket_date, reserved_cents) select ?, ?, ? where exists (select 1 from week)
       on conflict (workspace_id, bucket_date) do update
         set reserved_cents = d.reserved_cents + excluded.reserved_cents, updated_at = now()
         where ?::int is null or d.spent_cents + d.reserved_cents + excluded.reserved_cents <= ?::int
       returning 1
     )
     select (select used_before from week) as week_used_before, exists (select 1 from day) as reserved`,
    [
      workspaceId,
      target.key,
      reservation.budgetWeek,
      estimate,
      enforce,
      limits.weeklyBudgetCents ?? 0,
      estimate,
      workspaceId,
      reservation.spendDay,
      estimate,
      cap,
      cap,
    ],
  );
  const { week_used_before: weekUsedBefore, reserved } = r.rows[0] as { week_used_before: number | null; reserved: boolean };
  if (weekUsedBefore === null) return refuseWeek();
  if (!reserved) return refuseDay();
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
}

/**
 * Replaces a finished job's reservation with what it really cost, in the transaction that
 * records the job's final state. Idempotent: `spend_settled_at` is set by the same statement
 * that claims the settlement, so a retried activity or a second cancel settles nothing twice.
 * The cost lands in the buckets the job reserved in (the day and week it was accepted).
 */
export async function settleJobSpend(trx: Knex.Transaction, jobId: string): Promise<void> {
  const claimed = await trx.raw(
    `update jobs set spend_settled_at = now()
      where id = ? and spend_settled_at is null and reserved_cents is not null
      returning workspace_id, to_char(spend_day, 'YYYY-MM-DD') as spend_day, budget_key, to_char(budget_week, 'YYYY-MM-DD') as budget_week, reserved_cents, cost_cents`,
    [jobId],
  );
  const j = claimed.rows[0];
  if (!j) return;
  await trx.raw(
    `update ai_budget_weeks set reserved_cents = greatest(0, reserved_cents - ?), spent_cents = spent_cents + ?, updated_at = now()
      where workspace_id = ? and budget_key = ? and week_start = ?`,
    [j.reserved_cents, j.cost_cents, j.workspace_id, j.budget_key, j.budget_week],
  );
  await trx.raw(
    `update ai_spend_days set reserved_cents = greatest(0, reserved_cents - ?), spent_cents = spent_cents + ?, updated_at = now()
      where workspace_id = ? and bucket_date = ?`,
    [j.reserved_cents, j.cost_cents, j.workspace_id, j.spend_day],
  );
}
