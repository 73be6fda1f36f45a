import type { Knex } from 'knex';

// Engagement after publish (docs/engagement.md; spec 4.4 autoLike / autoComment):
//
// - post_engagements: one row per (post, account, kind) the engagement workflow acted on or
//   skipped. The unique key is what makes each like and comment exactly once on our side; the
//   network reference (`reference`) makes it exactly once on the network's.
// - workspaces.engagement_comments: the workspace's short list of comments amplifiers post
//   (null: the built-in list).

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('post_engagements', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('post_id', 40).notNullable().references('posts.id').onDelete('CASCADE');
    t.string('project_id', 40).notNullable().references('projects.id').onDelete('CASCADE');
    t.string('kind', 20).notNullable();
    t.string('state', 20).notNullable();
    t.string('reference', 255).notNullable();
    t.text('detail');
    t.string('network_ref', 300);
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('done_at', { useTz: true, precision: 3 });
    t.unique(['post_id', 'project_id', 'kind']);
  });
  await knex.schema.alterTable('workspaces', (t) => {
    t.jsonb('engagement_comments');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspaces', (t) => {
    t.dropColumn('engagement_comments');
  });
  await knex.schema.dropTableIfExists('post_engagements');
}
