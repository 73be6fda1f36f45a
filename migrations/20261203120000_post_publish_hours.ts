import type { Knex } from 'knex';

// The analytics overview's totals and posts per day (lib/analytics/overview.ts) summed every post
// published in the period and its latest metrics: 4,632 posts and as many probes of
// post_metric_state for the two 30-day periods of the largest project at 1,000,000 posts, the
// part of the overview that grew with the history (bench/README.md "reads"). They now read a
// rollup the database keeps as posts and their metrics change:
//
// - post_publish_hours: per project and UTC hour of publishing, the published posts and the sums
//   of their latest metrics. A period reads at most one row per hour of it, whatever the number
//   of posts; UTC hours need nothing when a project's timezone changes, and a local day or a
//   period's edge that falls inside an hour (zones whose offset is not whole hours) reads that
//   hour's own posts instead (docs/analytics.md "Overview").
// - post_metric_state.counted_at: the post's published_at while the overview counts it
//   (status published, in a project), null otherwise. The metrics row carries which bucket holds
//   its figures, so each trigger below needs only the row it fires for, and its own trigger moves
//   its figures whichever of a post's deletion and its cascade to this row runs first. It also
//   serves the best posts (the next migration's index).
//
// Who keeps what: the trigger on posts counts the post and sets counted_at on its metrics row;
// the trigger on post_metric_state adds the row's metrics to the bucket of its counted_at and
// moves them when counted_at or the metrics change (metrics may go down). Locks are taken in one
// order by every writer, a post, then its metrics row, then buckets, so a post published or
// removed while the sync writes its metrics neither deadlocks nor drifts; a metrics row inserted
// reads its post FOR SHARE, so a post changing meanwhile waits for it (and then sees the row).
// A bucket left with nothing is deleted.
//
// The triggers are created and the rollup backfilled in one transaction whose locks on posts and
// post_metric_state hold writers back meanwhile: nothing is counted twice or missed.

const HOUR = (at: string) => `date_trunc('hour', ${at} at time zone 'UTC') at time zone 'UTC'`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('lock table posts, post_metric_state in share row exclusive mode');
  await knex.schema.createTable('post_publish_hours', (t) => {
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('project_id', 40).notNullable().references('projects.id').onDelete('CASCADE');
    t.timestamp('hour', { useTz: true }).notNullable();
    t.integer('posts').notNullable().defaultTo(0);
    t.bigInteger('impressions').notNullable().defaultTo(0);
    t.bigInteger('reactions').notNullable().defaultTo(0);
    t.bigInteger('comments').notNullable().defaultTo(0);
    t.bigInteger('reshares').notNullable().defaultTo(0);
    t.primary(['workspace_id', 'project_id', 'hour']);
  });
  await knex.schema.alterTable('post_metric_state', (t) => {
    t.timestamp('counted_at', { useTz: true, precision: 3 });
  });

  await knex.raw(`
    create function post_publish_hours_put(w varchar, p varchar, h timestamptz, n integer, i bigint, r bigint, c bigint, s bigint)
    returns void language sql as $$
      insert into post_publish_hours (workspace_id, project_id, hour, posts, impressions, reactions, comments, reshares)
      values (w, p, h, n, i, r, c, s)
      on conflict (workspace_id, project_id, hour) do update
        set posts = post_publish_hours.posts + excluded.posts,
            impressions = post_publish_hours.impressions + excluded.impressions,
            reactions = post_publish_hours.reactions + excluded.reactions,
            comments = post_publish_hours.comments + excluded.comments,
            reshares = post_publish_hours.reshares + excluded.reshares
    $$`);
  // Takes from a bucket that exists (what was added to it); a bucket already gone with its
  // project or workspace takes nothing. Emptied, it is deleted.
  await knex.raw(`
    create function post_publish_hours_take(w varchar, p varchar, h timestamptz, n integer, i bigint, r bigint, c bigint, s bigint)
    returns void language plpgsql as $$
    declare
      left_over post_publish_hours;
    begin
      update post_publish_hours
         set posts = posts - n, impressions = impressions - i, reactions = reactions - r, comments = comments - c, reshares = reshares - s
       where workspace_id = w and project_id = p and hour = h
      returning * into left_over;
      if left_over.posts = 0 and left_over.impressions = 0 and left_over.reactions = 0 and left_over.comments = 0 and left_over.reshares = 0 then
        delete from post_publish_hours where workspace_id = w and project_id = p and hour = h;
      end if;
    end $$`);

  await knex.raw(`
    create function post_publish_hours_count() returns trigger language plpgsql as $$
    declare
      was timestamptz;
      now_at timestamptz;
    begin
      if tg_op <> 'INSERT' and old.status = 'published' and old.project_id is not null then was := old.published_at; end if;
      if tg_op <> 'DELETE' and new.status = 'published' and new.project_id is not null then now_at := new.published_at; end if;
      -- Its metrics row first (its own trigger moves the figures), then the counts. A deleted
      -- post's metrics row goes by its own cascade, its figures by its own trigger.
      if tg_op = 'UPDATE' then
        if was is not distinct from now_at and old.project_id is not distinct from new.project_id then
          return null;
        end if;
        update post_metric_state m set counted_at = now_at, project_id = coalesce(new.project_id, m.project_id)
         where m.post_id = new.id
           and (m.counted_at is distinct from now_at or m.project_id is distinct from coalesce(new.project_id, m.project_id));
      end if;
      if was is not null then
        perform post_publish_hours_take(old.workspace_id, old.project_id, ${HOUR('was')}, 1, 0, 0, 0, 0);
      end if;
      if now_at is not null then
        perform post_publish_hours_put(new.workspace_id, new.project_id, ${HOUR('now_at')}, 1, 0, 0, 0, 0);
      end if;
      return null;
    end $$`);
  await knex.raw(`
    create function post_metric_state_counted_at() returns trigger language plpgsql as $$
    begin
      select case when p.status = 'published' and p.project_id is not null then p.published_at end
        into new.counted_at
        from posts p where p.id = new.post_id
         for share;
      return new;
    end $$`);
  await knex.raw(`
    create function post_metric_state_hours() returns trigger language plpgsql as $$
    begin
      if tg_op = 'UPDATE' and old.counted_at is not null and new.counted_at is not null
         and old.workspace_id = new.workspace_id and old.project_id = new.project_id
         and ${HOUR('old.counted_at')} = ${HOUR('new.counted_at')} then
        if (old.impressions, old.reactions, old.comments, old.reshares) is distinct from (new.impressions, new.reactions, new.comments, new.reshares) then
          perform post_publish_hours_take(new.workspace_id, new.project_id, ${HOUR('new.counted_at')}, 0,
            old.impressions - new.impressions, old.reactions - new.reactions, old.comments - new.comments, old.reshares - new.reshares);
        end if;
        return null;
      end if;
      if tg_op <> 'INSERT' and old.counted_at is not null then
        perform post_publish_hours_take(old.workspace_id, old.project_id, ${HOUR('old.counted_at')}, 0,
          old.impressions, old.reactions, old.comments, old.reshares);
      end if;
      if tg_op <> 'DELETE' and new.counted_at is not null then
        perform post_publish_hours_put(new.workspace_id, new.project_id, ${HOUR('new.counted_at')}, 0,
          new.impressions, new.reactions, new.comments, new.reshares);
      end if;
      return null;
    end $$`);

  // The backfill before the triggers, under the locks taken above.
  await knex.raw(`
    update post_metric_state m set counted_at = p.published_at
      from posts p
     where p.id = m.post_id and p.status = 'published' and p.project_id is not null and p.published_at is not null`);
  await knex.raw(`
    insert into post_publish_hours (workspace_id, project_id, hour, posts, impressions, reactions, comments, reshares)
    select p.workspace_id, p.project_id, ${HOUR('p.published_at')}, count(*),
           coalesce(sum(m.impressions), 0), coalesce(sum(m.reactions), 0), coalesce(sum(m.comments), 0), coalesce(sum(m.reshares), 0)
      from posts p left join post_metric_state m on m.post_id = p.id
     where p.status = 'published' and p.project_id is not null and p.published_at is not null
     group by 1, 2, 3`);

  await knex.raw(`
    create trigger post_publish_hours_count after insert or delete or update of status, published_at, project_id on posts
    for each row execute function post_publish_hours_count()`);
  await knex.raw(
    'create trigger post_metric_state_counted_at before insert on post_metric_state for each row execute function post_metric_state_counted_at()',
  );
  await knex.raw(`
    create trigger post_metric_state_hours
    after insert or delete or update of counted_at, project_id, impressions, reactions, comments, reshares on post_metric_state
    for each row execute function post_metric_state_hours()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists post_metric_state_hours on post_metric_state');
  await knex.raw('drop trigger if exists post_metric_state_counted_at on post_metric_state');
  await knex.raw('drop trigger if exists post_publish_hours_count on posts');
  await knex.raw('drop function if exists post_metric_state_hours()');
  await knex.raw('drop function if exists post_metric_state_counted_at()');
  await knex.raw('drop function if exists post_publish_hours_count()');
  await knex.raw('drop function if exists post_publish_hours_take(varchar, varchar, timestamptz, integer, bigint, bigint, bigint, bigint)');
  await knex.raw('drop function if exists post_publish_hours_put(varchar, varchar, timestamptz, integer, bigint, bigint, bigint, bigint)');
  await knex.schema.alterTable('post_metric_state', (t) => t.dropColumn('counted_at'));
  await knex.schema.dropTableIfExists('post_publish_hours');
}
