import type { Knex } from 'knex';
import { config, planLimits } from '../config';
import { db, readPrepared, shapedRead } from '../db';
import { ApiError } from '../errors';
import { dayStartUtc, weekStartUtc } from '../time';
import { effectiveLimit } from '../limits';
import { AiBudgetWeek, AiSpendDay } from '../models';

// The two meters in front of every AI job (spec 2.16, 7.2, 8), in Postgres because they guard
// money: Redis "holds only what may be lost" (ARCHITECTURE.md).
//
// - Daily API AI-spend cap: per workspace and UTC day. Every job that calls a paid model (post
//   and image generation, file source ingest, file knowledge ingest) reserves its kind's
//   estimate (./reservations.ts) before it is queued; the job's real cost replaces the
//   reservation when it finishes (./settlement.ts). Refused (402 spend_cap_exceeded) when
//   spent + reserved + estimate > cap.
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
  const [w] = await readPrepared<Record<string, unknown>>(aiLimitsRead(null, { workspaceId, budgetKey: target?.key ?? '' }), { on: q });
  if (!w) throw new Error(`workspace ${workspaceId} does not exist`);
  return aiLimitsOf(w);
}

// The meters' reads are compiled once and sent as prepared statements (lib/db.ts `shapedRead`,
// as the post list's page is), on the knex or the transaction the caller hands them: an AI job's
// reservation reads them in its transaction. GET /v1/usage reads them all in one statement
// (api/operations/usage/queries.ts) and turns its columns into figures with aiLimitsOf and usedCentsOf.

/** loadAiLimits' read: the workspace, its billing workspace and the target's `ai_budgets` row. */
const aiLimitsRead = shapedRead((_shape: null, param: (name: 'workspaceId' | 'budgetKey') => string) =>
  db()('workspaces as w')
    .leftJoin('workspaces as b', 'b.id', 'w.billing_workspace_id')
    .leftJoin('ai_budgets as ab', (j) => j.on('ab.workspace_id', 'w.id').andOn('ab.budget_key', db().raw('?', [param('budgetKey')])))
    .where('w.id', param('workspaceId'))
    .first(aiLimitColumns()),
);

/** weekUsedCents' read: one target's week. */
const weekRead = shapedRead((_shape: null, param: (name: 'workspaceId' | 'budgetKey' | 'week') => string) =>
  AiBudgetWeek.forWorkspace(param('workspaceId'))
    .where({ budget_key: param('budgetKey'), week_start: param('week') })
    .select('spent_cents', 'reserved_cents')
    .toKnexQuery(),
);

/** dayUsedCents' read: the workspace's spend day. */
const dayRead = shapedRead((_shape: null, param: (name: 'workspaceId' | 'day') => string) =>
  AiSpendDay.forWorkspace(param('workspaceId'))
    .where({ bucket_date: param('day') })
    .select('spent_cents', 'reserved_cents')
    .toKnexQuery(),
);

type Spent = { spent_cents: number; reserved_cents: number };

/** What a week's or a day's row has used: settled cost plus open reservations; nothing without a row. */
export const usedCentsOf = (row: { spent_cents: number | null; reserved_cents: number | null } | undefined): number =>
  (row?.spent_cents ?? 0) + (row?.reserved_cents ?? 0);

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
  const [row] = await readPrepared<Spent>(weekRead(null, { workspaceId, budgetKey: key, week }), { on: q });
  return usedCentsOf(row);
}

/** Settled cost plus open reservations of the workspace's spend day. */
export async function dayUsedCents(q: Knex | Knex.Transaction, workspaceId: string, day: string): Promise<number> {
  const [row] = await readPrepared<Spent>(dayRead(null, { workspaceId, day }), { on: q });
  return usedCentsOf(row);
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
