import type { Knex } from 'knex';

// Post analytics (spec 4.9 analytics tools; docs/analytics.md): metrics of published posts,
// synced from the network by the metrics-sync workflow on a decaying cadence.
//
// - post_metric_samples: the time series, one row per post per sync. The counters are the
//   network's cumulative totals at `sampled_at`; daily gains are differences between samples.
// - post_metric_days: daily gains per project (see below).
// - post_metric_state: one row per published post: its latest totals (the list and the
//   overview read these, never the series, for "how did this post do"), when it is due next
//   (`next_sync_at`, null once the cadence has ended or the post cannot be read any more) and
//   the sync's visible state (`ok`, `pending`, `blocked` when its connection cannot be used,
//   `failed` when the network no longer serves the post, `done`).
const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 3 });

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('post_metric_state', (t) => {
    t.string('post_id', 40).primary().references('posts.id').onDelete('CASCADE');
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('project_id', 40).notNullable().references('projects.id').onDelete('CASCADE');
    t.string('network_post_urn', 200).notNullable();
    ts(t, 'published_at').notNullable();
    t.bigInteger('impressions').notNullable().defaultTo(0);
    t.bigInteger('reactions').notNullable().defaultTo(0);
    t.bigInteger('comments').notNullable().defaultTo(0);
    t.bigInteger('reshares').notNullable().defaultTo(0);
    t.integer('samples').notNullable().defaultTo(0);
    t.string('sync_state', 20).notNullable().defaultTo('pending');
    t.string('last_error', 500);
    ts(t, 'last_synced_at');
    ts(t, 'next_sync_at');
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    // Every read of the state is per project (overview, best times, sync status, post list).
    t.index(['project_id', 'published_at']);
  });
  // The sync picks due rows in due order; finished rows leave the index.
  await knex.raw('create index post_metric_state_due on post_metric_state (next_sync_at) where next_sync_at is not null');

  await knex.schema.createTable('post_metric_samples', (t) => {
    t.string('post_id', 40).notNullable().references('posts.id').onDelete('CASCADE');
    t.string('workspace_id', 40).notNullable();
    t.string('project_id', 40).notNullable();
    ts(t, 'sampled_at').notNullable();
    t.bigInteger('impressions').notNullable();
    t.bigInteger('reactions').notNullable();
    t.bigInteger('comments').notNullable();
    t.bigInteger('reshares').notNullable();
    t.primary(['post_id', 'sampled_at']);
    t.index(['project_id', 'sampled_at']);
  });

  // Daily gains per project (the overview's series): what all of a project's posts gained on a
  // calendar day of the project's timezone, added by the sync as it writes each sample, so the
  // overview reads at most 366 rows instead of aggregating the series.
  await knex.schema.createTable('post_metric_days', (t) => {
    t.string('project_id', 40).notNullable().references('projects.id').onDelete('CASCADE');
    t.date('day').notNullable();
    t.string('workspace_id', 40).notNullable();
    t.bigInteger('impressions').notNullable().defaultTo(0);
    t.bigInteger('reactions').notNullable().defaultTo(0);
    t.bigInteger('comments').notNullable().defaultTo(0);
    t.bigInteger('reshares').notNullable().defaultTo(0);
    t.primary(['project_id', 'day']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('post_metric_days');
  await knex.schema.dropTableIfExists('post_metric_samples');
  await knex.schema.dropTableIfExists('post_metric_state');
}
