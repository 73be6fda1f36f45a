import type { Knex } from 'knex';

// docs/generation.md "Spend and budgets": the workspace's meter rows (ai_budget_weeks,
// ai_spend_days) are the one place every generation of a workspace passes through, and a row
// lock is held from the statement that takes it until COMMIT. Each use is now a single
// statement committed on its own, so no client round trip happens while the rows are held.
//
// - reserve_ai_spend: both conditional reservations, week row first then day row, as the
//   conditional upserts did before (Postgres re-checks each ON CONFLICT ... WHERE against the
//   newest row after waiting for a concurrent lock). A refusal raises SQLSTATE AI402 with the
//   meter's name as the message, so the statement that inserts the job with it (lib/generation/
//   queue.ts) rolls back as a whole: nothing queued, nothing reserved. Answers the week's usage
//   before this reservation (for the shadow/warn log).
// - jobs_unsettled: the final jobs whose spend is not yet settled. Settlement follows the final
//   state's COMMIT (lib/spend/settlement.ts settleJobSpend); the reconciler's pass settles any
//   job a crash left between the two.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function reserve_ai_spend(
      p_workspace_id text, p_budget_key text, p_week date, p_day date,
      p_estimate integer, p_enforce boolean, p_budget integer, p_cap integer
    ) returns integer language plpgsql as $$
    declare
      used_before integer;
    begin
      insert into ai_budget_weeks as b (workspace_id, budget_key, week_start, reserved_cents)
        values (p_workspace_id, p_budget_key, p_week, p_estimate)
      on conflict (workspace_id, budget_key, week_start) do update
        set reserved_cents = b.reserved_cents + excluded.reserved_cents, updated_at = now()
        where not p_enforce or b.spent_cents + b.reserved_cents < p_budget
      returning b.spent_cents + b.reserved_cents - p_estimate into used_before;
      if not found then
        raise exception 'weekly_ai_budget' using errcode = 'AI402';
      end if;
      insert into ai_spend_days as d (workspace_id, bucket_date, reserved_cents)
        values (p_workspace_id, p_day, p_estimate)
      on conflict (workspace_id, bucket_date) do update
        set reserved_cents = d.reserved_cents + excluded.reserved_cents, updated_at = now()
        where p_cap is null or d.spent_cents + d.reserved_cents + excluded.reserved_cents <= p_cap;
      if not found then
        raise exception 'daily_api_spend_cap' using errcode = 'AI402';
      end if;
      return used_before;
    end $$`);
  await knex.raw(
    `create index jobs_unsettled on jobs (completed_at)
      where spend_settled_at is null and reserved_cents is not null and status in ('DONE', 'FAILED', 'CANCELLED')`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists jobs_unsettled');
  await knex.raw('drop function if exists reserve_ai_spend(text, text, date, date, integer, boolean, integer, integer)');
}
