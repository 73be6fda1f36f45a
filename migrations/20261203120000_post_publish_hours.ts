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
// The rollup is backfilled online, after the migration, by the reconciler
// (post_publish_hours_backfill_step below, lib/analytics/rollup.ts): a writer is held back at
// most one step. rollup_backfills says how far it is: a post whose id is at most `through_id` is
// covered (the triggers keep its figures), one beyond it is left for the backfill; `done_at`
// set, every post is. While it runs, a trigger that meets a published post takes a shared
// advisory lock and reads the mark after it, and each step takes the lock exclusively: every
// change to a post beyond the mark commits before the step that reads it, and every change after
// a step finds the mark moved. Until it is done, the overviews read their periods from the posts
// (lib/analytics/overview.ts). A database without posts is done at once.

const HOUR = (at: string) => `date_trunc('hour', ${at} at time zone 'UTC') at time zone 'UTC'`;

/** The advisory lock between the triggers (shared) and a backfill step (exclusive), keyed as the service's others are. */
const BACKFILL_LOCK = `hashtext('rollup-backfill:post_publish_hours')`;

export async function up(knex: Knex): Promise<void> {
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
  // A nullable column without a default: a change of the catalog, not a rewrite of the table.
  await knex.schema.alterTable('post_metric_state', (t) => {
    t.timestamp('counted_at', { useTz: true, precision: 3 });
  });
  const { rows } = await knex.raw('select exists (select 1 from posts) as any');
  await installRollupKeepers(knex, rows[0].any ? 'to backfill' : 'done');
}

/**
 * The rollup's state, its functions and its triggers, created or replaced. `start` is the state
 * of a database that has none yet: 'done' where nothing is to be counted, or where the rollup was
 * already backfilled under a lock (migration 20261204100000). A state already there is kept.
 */
export async function installRollupKeepers(knex: Knex, start: 'done' | 'to backfill'): Promise<void> {
  await knex.raw(`
    create table if not exists rollup_backfills (
      name varchar(60) primary key,
      through_id varchar(40),
      counted bigint not null default 0,
      started_at timestamptz not null default now(),
      done_at timestamptz
    )`);
  await knex.raw(
    `insert into rollup_backfills (name, done_at) values ('post_publish_hours', ${start === 'done' ? 'now()' : 'null'}) on conflict do nothing`,
  );

  // Whether the triggers keep this post's figures. Done, or the post at or before the mark: yes,
  // without a lock (the mark only moves forward, and the step that moved it past the post has
  // committed, so this write changes what it counted). Else the shared lock first, then the mark
  // read by a statement of its own, which sees what a step committed while this writer waited.
  await knex.raw(`
    create or replace function post_publish_hours_covers(post varchar) returns boolean language plpgsql as $$
    declare
      b rollup_backfills;
    begin
      select * into b from rollup_backfills where name = 'post_publish_hours';
      if b.done_at is not null or post <= b.through_id then return true; end if;
      perform pg_advisory_xact_lock_shared(${BACKFILL_LOCK});
      select * into b from rollup_backfills where name = 'post_publish_hours';
      return b.done_at is not null or coalesce(post <= b.through_id, false);
    end $$`);

  await knex.raw(`
    create or replace function post_publish_hours_put(w varchar, p varchar, h timestamptz, n integer, i bigint, r bigint, c bigint, s bigint)
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
    create or replace function post_publish_hours_take(w varchar, p varchar, h timestamptz, n integer, i bigint, r bigint, c bigint, s bigint)
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
    create or replace function post_publish_hours_count() returns trigger language plpgsql as $$
    declare
      was timestamptz;
      now_at timestamptz;
    begin
      if tg_op <> 'INSERT' and old.status = 'published' and old.project_id is not null then was := old.published_at; end if;
      if tg_op <> 'DELETE' and new.status = 'published' and new.project_id is not null then now_at := new.published_at; end if;
      if tg_op = 'UPDATE' and was is not distinct from now_at and old.project_id is not distinct from new.project_id then
        return null;
      end if;
      -- A post the backfill has not reached is counted nowhere yet: the backfill counts it as it
      -- finds it. Its metrics row still follows its project.
      if (was is not null or now_at is not null)
         and not post_publish_hours_covers(case when tg_op = 'DELETE' then old.id else new.id end) then
        was := null;
        now_at := null;
      end if;
      -- Its metrics row first (its own trigger moves the figures), then the counts. A deleted
      -- post's metrics row goes by its own cascade, its figures by its own trigger.
      if tg_op = 'UPDATE' then
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
    create or replace function post_metric_state_counted_at() returns trigger language plpgsql as $$
    begin
      select case when p.status = 'published' and p.project_id is not null then p.published_at end
        into new.counted_at
        from posts p where p.id = new.post_id
         for share;
      if new.counted_at is not null and not post_publish_hours_covers(new.post_id) then
        new.counted_at := null;
      end if;
      return new;
    end $$`);
  // Follows counted_at alone, which is set only for a covered post. A backfill step sets it for
  // its posts and adds their figures itself (rollup.backfill = on).
  await knex.raw(`
    create or replace function post_metric_state_hours() returns trigger language plpgsql as $$
    begin
      if current_setting('rollup.backfill', true) = 'on' then return null; end if;
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

  // One step of the backfill: the next `batch` posts beyond the mark, counted, and the mark moved
  // past them, in the caller's transaction. Returns the posts read, or null when the rollup is
  // done. It waits at most 100 ms for the writers that hold the lock (writers that come meanwhile
  // queue behind it, so that is also the longest a writer waits for a step to begin), and at most
  // 500 ms for a row a writer holds (a metrics row, or a bucket a write to a post the mark has
  // passed is changing); both are under Postgres' deadlock timeout, so when a writer and a step
  // wait on each other it is the step that gives up, with lock_not_available, and is tried again.
  await knex.raw(`
    create or replace function post_publish_hours_backfill_step(batch integer) returns integer language plpgsql as $$
    declare
      b rollup_backfills;
      last_id varchar;
      n integer;
    begin
      perform set_config('lock_timeout', '100ms', true);
      perform pg_advisory_xact_lock(${BACKFILL_LOCK});
      select * into b from rollup_backfills where name = 'post_publish_hours';
      if b.done_at is not null then return null; end if;
      perform set_config('lock_timeout', '500ms', true);
      select count(*), max(x.id) into n, last_id
        from (select p.id from posts p where p.id > coalesce(b.through_id, '') order by p.id limit batch) x;
      -- The batch's counted posts: their metrics rows marked (their trigger stands aside) and the
      -- figures each update found (the latest, after any writer that held the row) added up.
      perform set_config('rollup.backfill', 'on', true);
      with counted_posts as (
        select p.id, p.workspace_id, p.project_id, p.published_at from posts p
         where p.id > coalesce(b.through_id, '') and p.id <= last_id
           and p.status = 'published' and p.project_id is not null and p.published_at is not null
      ), marked as (
        update post_metric_state m set counted_at = x.published_at from counted_posts x where m.post_id = x.id
        returning m.post_id, m.impressions, m.reactions, m.comments, m.reshares
      )
      insert into post_publish_hours (workspace_id, project_id, hour, posts, impressions, reactions, comments, reshares)
        select x.workspace_id, x.project_id, ${HOUR('x.published_at')}, count(*),
               coalesce(sum(m.impressions), 0), coalesce(sum(m.reactions), 0), coalesce(sum(m.comments), 0), coalesce(sum(m.reshares), 0)
          from counted_posts x left join marked m on m.post_id = x.id
         group by 1, 2, 3
        on conflict (workspace_id, project_id, hour) do update
          set posts = post_publish_hours.posts + excluded.posts,
              impressions = post_publish_hours.impressions + excluded.impressions,
              reactions = post_publish_hours.reactions + excluded.reactions,
              comments = post_publish_hours.comments + excluded.comments,
              reshares = post_publish_hours.reshares + excluded.reshares;
      perform set_config('rollup.backfill', 'off', true);
      update rollup_backfills
         set through_id = coalesce(last_id, through_id), counted = counted + n,
             done_at = case when n < batch then now() end
       where name = 'post_publish_hours';
      return n;
    end $$`);

  // Dropped and created rather than `create or replace trigger` (Postgres 14), in the migration's transaction.
  await knex.raw('drop trigger if exists post_publish_hours_count on posts');
  await knex.raw(`
    create trigger post_publish_hours_count after insert or delete or update of status, published_at, project_id on posts
    for each row execute function post_publish_hours_count()`);
  await knex.raw('drop trigger if exists post_metric_state_counted_at on post_metric_state');
  await knex.raw(
    'create trigger post_metric_state_counted_at before insert on post_metric_state for each row execute function post_metric_state_counted_at()',
  );
  await knex.raw('drop trigger if exists post_metric_state_hours on post_metric_state');
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
  await knex.raw('drop function if exists post_publish_hours_backfill_step(integer)');
  await knex.raw('drop function if exists post_publish_hours_covers(varchar)');
  await knex.raw('drop function if exists post_metric_state_counted_at()');
  await knex.raw('drop function if exists post_publish_hours_count()');
  await knex.raw('drop function if exists post_publish_hours_take(varchar, varchar, timestamptz, integer, bigint, bigint, bigint, bigint)');
  await knex.raw('drop function if exists post_publish_hours_put(varchar, varchar, timestamptz, integer, bigint, bigint, bigint, bigint)');
  await knex.schema.alterTable('post_metric_state', (t) => t.dropColumn('counted_at'));
  await knex.schema.dropTableIfExists('post_publish_hours');
  await knex.schema.dropTableIfExists('rollup_backfills');
}
