import type { Knex } from 'knex';
import type { ApiError } from '../errors';
import { log } from '../logger';
import { jobKindOf, type JobType } from '../jobs/kinds';
import { apiSpendOf, dayUsedCents, periodsAt, spendCapExceeded, usageLimitExceeded, weekUsedCents } from './meters';
import type { AiLimits, BlockedBy, BudgetTarget } from './meters';

// The reservation a job takes on both meters (./meters.ts) in the statement that records it
// (lib/jobs/queue.ts insertQueuedJob): its kind's estimate until its real cost is known, which
// replaces it at settlement (./settlement.ts).

export interface Reservation {
  reservedCents: number;
  spendDay: string;
  budgetKey: string;
  budgetWeek: string;
}

/**
 * What a job of `type` reserves until its real cost is known: its kind's config value
 * (lib/jobs/kinds/; spec 4.4 and 8: about 5 cents for a post generation). Every kind is metered
 * alike, so the daily cap and the weekly budget hold whatever the money was spent on
 * (docs/generation.md "Spend and budgets").
 */
export function reserveCentsOf(type: JobType): number {
  return jobKindOf(type).reserveCents();
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
