import type { Knex } from 'knex';

// Batches of work the service takes for every workspace at once (the outbox relay, the
// reconciler) are taken in turns by workspace, not oldest first: a workspace with 10,000 rows
// waiting would otherwise fill batch after batch while another workspace's one row waits behind
// all of them (docs/operations.md "Fairness between workspaces"). Temporal's task queue
// fairness does the same for the tasks these batches start (lib/temporal/contracts/priority.ts).

/**
 * `candidates` (which must select `workspace_id` and `order`) in turns: every workspace's first
 * row by `order`, then every workspace's second, and so on, oldest first within a turn; at most
 * `limit` rows. Within one workspace the rows keep their order, so a workspace's own work is
 * still taken oldest first. Select the columns wanted from the result.
 */
export function inWorkspaceTurns(
  db: Knex | Knex.Transaction,
  candidates: Knex.QueryBuilder,
  order: string,
  limit: number,
): Knex.QueryBuilder {
  return db
    .from(
      candidates
        .clone()
        .select(db.raw('row_number() over (partition by workspace_id order by ??) as workspace_turn', [order]))
        .as('candidates'),
    )
    .orderBy([{ column: 'workspace_turn' }, { column: order }])
    .limit(limit);
}
