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
// The same numbers answer GET /v1/usage, and `wouldRefuse` below is the one statement of the
// admission rule, so `canGenerate` is false exactly when a generation would be refused.

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

export interface BudgetTarget { key: string; scope: BudgetScope }

export interface Periods {
  /** UTC day of the spend bucket, YYYY-MM-DD. */
  day: string;
  /** Monday of the budget week, YYYY-MM-DD. */
  week: string;
  /** Next Monday 00:00 UTC. */
  weekResetsAt: string;
}

export interface ApiSpend { bucketDate: string; capCents: number | null; spentCents: number; remainingCents: number | null }

const ymd = (d: Date) => d.toISOString().slice(0, 10);

export function periodsAt(now: Date): Periods {
  const week = weekStartUtc(now);
  return { day: ymd(dayStartUtc(now)), week: ymd(week), weekResetsAt: new Date(week.getTime() + 7 * 86_400_000).toISOString() };
}

/** Company pages have no budget of their own: they draw from the workspace pool (spec 4.8 usage). */
export function budgetTargetOf(project: { id: string; type: string }): BudgetTarget {
  return project.type === 'COMPANY_PAGE' ? { key: POOL_KEY, scope: 'ai_workspace_pool' } : { key: project.id, scope: 'ai_project' };
}

export async function loadAiLimits(q: Knex | Knex.Transaction, workspaceId: string): Promise<AiLimits> {
  const w = await q('workspaces as w').leftJoin('workspaces as b', 'b.id', 'w.billing_workspace_id').where('w.id', workspaceId)
    .first('w.plan', 'b.plan as billing_plan', 'w.ai_enforcement', 'w.weekly_ai_budget_cents', 'w.daily_spend_cap_cents');
  if (!w) throw new Error(`workspace ${workspaceId} does not exist`);
  const plan: string = w.billing_plan ?? w.plan;
  const limits = planLimits(plan);
  // An unknown stored value is read as the strictest mode rather than silently switching refusals off.
  const enforcement = (ENFORCEMENTS as readonly string[]).includes(w.ai_enforcement) ? (w.ai_enforcement as Enforcement) : 'block';
  return {
    plan,
    enforcement,
    // Workspace columns override the plan; null there means "the plan's value", not "unlimited".
    weeklyBudgetCents: w.weekly_ai_budget_cents ?? limits.weeklyAiBudgetCents,
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
 * The admission rule, stated once. `weekUsed` and `dayUsed` count settled cost plus the
 * reservations of jobs still in flight. The weekly budget is checked first: it resets later
 * than the daily cap, so it is the more useful reason to give.
 */
export function wouldRefuse(limits: AiLimits, weekUsed: number, dayUsed: number, estimateCents = config.llm.reserveCents): BlockedBy | null {
  if (limits.enforcement === 'block' && limits.weeklyBudgetCents !== null && weekUsed >= limits.weeklyBudgetCents) return 'weekly_ai_budget';
  if (limits.dailyCapCents !== null && dayUsed + estimateCents > limits.dailyCapCents) return 'daily_api_spend_cap';
  return null;
}

/** Settled cost plus open reservations of one weekly budget. */
export async function weekUsedCents(q: Knex | Knex.Transaction, workspaceId: string, key: string, week: string): Promise<number> {
  const row = await q('ai_budget_weeks').where({ workspace_id: workspaceId, budget_key: key, week_start: week }).first('spent_cents', 'reserved_cents');
  return row ? row.spent_cents + row.reserved_cents : 0;
}

/** Settled cost plus open reservations of the workspace's spend day. */
export async function dayUsedCents(q: Knex | Knex.Transaction, workspaceId: string, day: string): Promise<number> {
  const row = await q('ai_spend_days').where({ workspace_id: workspaceId, bucket_date: day }).first('spent_cents', 'reserved_cents');
  return row ? row.spent_cents + row.reserved_cents : 0;
}

export function usageLimitExceeded(target: BudgetTarget, projectId: string | null, used: number, limits: AiLimits, periods: Periods): ApiError {
  const pct = percentUsed(used, limits.weeklyBudgetCents);
  const whose = target.scope === 'ai_project' ? 'this project' : "the workspace's shared pool";
  // 402 like spend_cap_exceeded: both say "the AI money for this period is used up", and a
  // generic 429 handler would retry for days (docs/generation.md).
  return new ApiError(402, 'usage_limit_exceeded',
    `The weekly AI budget of ${whose} is used up (${pct} %); it resets at ${periods.weekResetsAt}.`,
    { scope: target.scope, percentUsed: pct, resetsAt: periods.weekResetsAt, ...(projectId ? { projectId } : {}) });
}

export function spendCapExceeded(spend: ApiSpend, estimateCents: number): ApiError {
  return new ApiError(402, 'spend_cap_exceeded',
    `The daily API AI-spend cap of ${spend.capCents} cents is reached (${spend.spentCents} spent or reserved; a generation reserves ${estimateCents}). It resets at 00:00 UTC.`,
    { ...spend, estimateCents });
}

export interface Reservation { reservedCents: number; spendDay: string; budgetKey: string; budgetWeek: string }

/**
 * Reserves the estimate against both meters inside the caller's transaction (the one that
 * inserts the job, so a reservation never exists without its job), or throws the refusal.
 * Each check is one conditional UPDATE: Postgres re-evaluates its WHERE after waiting for a
 * concurrent reservation's row lock, so simultaneous requests cannot both take the last cents.
 * Rows are always locked week first, then day, so reservations and settlements never deadlock.
 */
export async function reserveGenerationSpend(
  trx: Knex.Transaction,
  input: { workspaceId: string; target: BudgetTarget; projectId: string; limits: AiLimits; now: Date },
): Promise<Reservation> {
  const { workspaceId, target, limits } = input;
  const periods = periodsAt(input.now);
  const estimate = config.llm.reserveCents;

  await trx.raw('insert into ai_budget_weeks (workspace_id, budget_key, week_start) values (?, ?, ?) on conflict do nothing', [workspaceId, target.key, periods.week]);
  const enforce = limits.enforcement === 'block' && limits.weeklyBudgetCents !== null;
  const week = await trx.raw(
    `update ai_budget_weeks set reserved_cents = reserved_cents + ?, updated_at = now()
      where workspace_id = ? and budget_key = ? and week_start = ? and (not ?::boolean or spent_cents + reserved_cents < ?::int)
      returning spent_cents + reserved_cents - ? as used_before`,
    [estimate, workspaceId, target.key, periods.week, enforce, limits.weeklyBudgetCents ?? 0, estimate],
  );
  if (week.rows.length === 0) {
    const used = await weekUsedCents(trx, workspaceId, target.key, periods.week);
    throw usageLimitExceeded(target, target.scope === 'ai_project' ? input.projectId : null, used, limits, periods);
  }
  const usedBefore = Number(week.rows[0].used_before);
  if (!enforce && limits.weeklyBudgetCents !== null && usedBefore >= limits.weeklyBudgetCents && limits.enforcement !== 'off') {
    // shadow and warn never refuse (spec 8); they only tell operators what block would have done.
    (limits.enforcement === 'warn' ? log.warn : log.info)('weekly AI budget exhausted; not refused under this enforcement', {
      workspaceId, budgetKey: target.key, enforcement: limits.enforcement, usedCents: usedBefore, budgetCents: limits.weeklyBudgetCents,
    });
  }

  await trx.raw('insert into ai_spend_days (workspace_id, bucket_date) values (?, ?) on conflict do nothing', [workspaceId, periods.day]);
  const cap = limits.dailyCapCents;
  const day = await trx.raw(
    `update ai_spend_days set reserved_cents = reserved_cents + ?, updated_at = now()
      where workspace_id = ? and bucket_date = ? and (?::int is null or spent_cents + reserved_cents + ? <= ?::int)
      returning 1`,
    [estimate, workspaceId, periods.day, cap, estimate, cap],
  );
  if (day.rows.length === 0) {
    const used = await dayUsedCents(trx, workspaceId, periods.day);
    throw spendCapExceeded(apiSpendOf(periods.day, cap, used), estimate);
  }
  return { reservedCents: estimate, spendDay: periods.day, budgetKey: target.key, budgetWeek: periods.week };
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
