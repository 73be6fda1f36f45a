// Per-workspace overrides of plan limits (spec 2.16: AI budgets, the daily spend cap, storage),
// set by operators (bin/admin). One encoding for every override column: null keeps the plan's
// value, a non-negative number replaces it, and UNLIMITED_OVERRIDE lifts the limit (the plans'
// own "unlimited" is null in lib/config.ts PlanLimits).

export const UNLIMITED_OVERRIDE = -1;

/** What an operator sets: a number, 'unlimited', or null for the plan's value again. */
export type LimitOverride = number | 'unlimited' | null;

/** The limit in force (null = unlimited) from a stored override and the plan's value. */
export function effectiveLimit(stored: number | string | null | undefined, planValue: number | null): number | null {
  if (stored === null || stored === undefined) return planValue;
  const n = Number(stored);
  return n < 0 ? null : n;
}

/** The stored value of an operator's override. */
export function storedOverride(value: LimitOverride): number | null {
  return value === 'unlimited' ? UNLIMITED_OVERRIDE : value;
}

/** A stored override as operators read it back: the number, 'unlimited', or null (the plan's). */
export function presentOverride(stored: number | string | null | undefined): LimitOverride {
  if (stored === null || stored === undefined) return null;
  const n = Number(stored);
  return n < 0 ? 'unlimited' : n;
}
