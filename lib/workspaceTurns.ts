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

/**
 * For the rest of the transaction, the planner reads tables through an index, neither by a
 * sequential nor by a bitmap scan, whichever its statistics of the moment favour (an ANALYZE taken
 * while a backlog waited makes both look cheap). For the queues above, each read from a partial
 * index that holds only the waiting rows (`outbox_events_undispatched`, `posts_schedule_unsynced`,
 * `jobs_queued_unstarted`): every row that leaves the queue leaves a dead entry there until VACUUM
 * removes it. An index scan marks each dead entry the first time it passes it, and later scans skip
 * it; the other two read every dead row's table page again on every pass. Chosen by the planner,
 * the outbox relay's claim took 14 ms at 20,000 posts and grew with every event relayed since the
 * last VACUUM (bench/README.md "population"); through the index it reads the waiting rows and a
 * few index pages.
 */
export async function readThroughIndexes(trx: Knex.Transaction): Promise<void> {
  await trx.raw("select set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)");
}
