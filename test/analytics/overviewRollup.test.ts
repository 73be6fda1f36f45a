import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Knex } from 'knex';
import { createProject } from '../../admin/provision';
import { addDays, daysBetween, periodBounds, periodTotals, postFigures, projectOverview, totalsOf } from '../../lib/analytics/overview';
import { advanceRollupBackfill, clearRollupReadyCache } from '../../lib/analytics/rollup';
import { createKnex, db, migrateLatest } from '../../lib/db';
import { createEmptyDatabase, dropDatabase } from '../../tooling/databases';
import { newId } from '../../lib/ids';
import { workspaceWithKey } from '../support/factories';
import { waitFor } from '../support/wait';

// docs/analytics.md "Overview": the totals, the posts per day and the best posts read the rollup
// post_publish_hours and the metrics rows' counted_at, both kept by triggers (migration
// 20261203120000). Whatever is written to posts and post_metric_state, and in whatever order
// concurrent writers commit, the rollup must be the plain aggregate of the posts it sums, and
// the overview must answer what a sum over the period's posts answers.

const MINUTE = 60_000;

/** The rollup as the posts and their latest metrics say it is: the plain aggregate. */
async function plainHours(workspaceId: string, k: Knex = db()) {
  const { rows } = await k.raw(
    `select p.project_id, date_trunc('hour', p.published_at at time zone 'UTC') at time zone 'UTC' as hour, count(*)::int as posts,
            coalesce(sum(m.impressions), 0)::bigint as impressions, coalesce(sum(m.reactions), 0)::bigint as reactions,
            coalesce(sum(m.comments), 0)::bigint as comments, coalesce(sum(m.reshares), 0)::bigint as reshares
       from posts p left join post_metric_state m on m.post_id = p.id
      where p.workspace_id = ? and p.status = 'published' and p.project_id is not null and p.published_at is not null
      group by 1, 2 order by 1, 2`,
    [workspaceId],
  );
  return rows;
}

async function keptHours(workspaceId: string, k: Knex = db()) {
  return k('post_publish_hours')
    .where({ workspace_id: workspaceId })
    .orderBy(['project_id', 'hour'])
    .select('project_id', 'hour', 'posts', 'impressions', 'reactions', 'comments', 'reshares');
}

async function assertNoDrift(workspaceId: string, context = '', k: Knex = db()) {
  assert.deepEqual(await keptHours(workspaceId, k), await plainHours(workspaceId, k), `post_publish_hours drifted ${context}`);
  const { rows } = await k.raw(
    `select m.post_id, m.counted_at, p.status, p.published_at, p.project_id, m.project_id as metrics_project_id
       from post_metric_state m join posts p on p.id = m.post_id
      where m.workspace_id = ?
        and (m.counted_at is distinct from case when p.status = 'published' and p.project_id is not null then p.published_at end
             or m.project_id <> coalesce(p.project_id, m.project_id))`,
    [workspaceId],
  );
  assert.deepEqual(rows, [], `post_metric_state.counted_at drifted ${context}`);
}

/** The totals of these projects' posts published in [start, end), summed over the posts. */
async function plainTotals(workspaceId: string, projectIds: string[], start: Date, end: Date) {
  return totalsOf(
    await db()('posts as p')
      .where({ 'p.workspace_id': workspaceId, 'p.status': 'published' })
      .whereIn('p.project_id', projectIds)
      .where('p.published_at', '>=', start)
      .where('p.published_at', '<', end)
      .leftJoin('post_metric_state as m', 'm.post_id', 'p.id')
      .first(
        db().raw('count(*) as posts'),
        ...['impressions', 'reactions', 'comments', 'reshares'].map((c) => db().raw(`sum(m.${c}) as ${c}`)),
      ),
  );
}

/** What the overview answered before the rollup: sums, counts per local day and the sort, over the period's posts. */
async function plainFigures(project: { id: string; workspace_id: string; timezone: string }, from: string, to: string) {
  const tz = project.timezone;
  const { start, end } = periodBounds(from, to, tz);
  const days = daysBetween(from, to);
  const prev = periodBounds(addDays(from, -days), addDays(from, -1), tz);
  const posts = (a: Date, b: Date) =>
    db()('posts as p')
      .where({ 'p.workspace_id': project.workspace_id, 'p.project_id': project.id, 'p.status': 'published' })
      .where('p.published_at', '>=', a)
      .where('p.published_at', '<', b);
  const sums = (a: Date, b: Date) => plainTotals(project.workspace_id, [project.id], a, b);
  const perDay = new Map<string, number>(
    (
      await posts(start, end)
        .groupBy('day')
        .select(db().raw(`to_char((p.published_at at time zone ?)::date, 'YYYY-MM-DD') as day`, [tz]), db().raw('count(*)::int as n'))
    ).map((r: { day: string; n: number }) => [r.day, r.n]),
  );
  const best = await posts(start, end)
    .join('post_metric_state as m', 'm.post_id', 'p.id')
    .orderByRaw('(m.reactions + m.comments + m.reshares) desc, m.impressions desc, p.id')
    .limit(5)
    .select('p.id', 'p.title', 'p.published_at', 'm.impressions', 'm.reactions', 'm.comments', 'm.reshares');
  return {
    totals: await sums(start, end),
    previous: await sums(prev.start, prev.end),
    daily: Array.from({ length: days }, (_, i) => [addDays(from, i), perDay.get(addDays(from, i)) ?? 0]),
    bestPosts: best.map(postFigures),
  };
}

async function assertOverviewIsThePlainSum(project: { id: string; workspace_id: string; timezone: string }, from: string, to: string) {
  const o = await projectOverview(project, from, to);
  const plain = await plainFigures(project, from, to);
  const context = `${project.timezone} ${from}..${to}`;
  assert.deepEqual(o.totals, plain.totals, `totals, ${context}`);
  assert.deepEqual(o.previousPeriod.totals, plain.previous, `previous period, ${context}`);
  assert.deepEqual(
    o.daily.map((d) => [d.date, d.posts]),
    plain.daily,
    `posts per day, ${context}`,
  );
  assert.deepEqual(o.bestPosts, plain.bestPosts, `best posts, ${context}`);
}

function postRow(ws: { id: string }, projectId: string | null, status: string, publishedAt: Date | null) {
  return {
    id: newId('post'),
    workspace_id: ws.id,
    project_id: projectId,
    status,
    title: 'rollup',
    content: 'x',
    content_type: 'PERSONAL',
    network_post_urn: status === 'published' ? `urn:li:share:${Math.floor(Math.random() * 1e12)}` : null,
    published_at: publishedAt,
  };
}

function metricsRow(post: { id: string; workspace_id: string; project_id: string | null; published_at: Date | null }, m: number[]) {
  return {
    post_id: post.id,
    workspace_id: post.workspace_id,
    project_id: post.project_id,
    network_post_urn: 'urn:li:share:1',
    published_at: post.published_at ?? new Date(),
    impressions: m[0],
    reactions: m[1],
    comments: m[2],
    reshares: m[3],
    samples: 1,
    sync_state: 'ok',
  };
}

// Zones whose offset is not whole hours, half-hour DST (Lord Howe), DST at midnight (Beirut,
// Santiago, Cairo), and the plain ones.
const ZONES = [
  'UTC',
  'Europe/Paris',
  'America/New_York',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'America/St_Johns',
  'Pacific/Chatham',
  'Australia/Lord_Howe',
  'Asia/Beirut',
  'America/Santiago',
  'Africa/Cairo',
];

const BASE = Date.parse('2031-03-10T00:00:00Z');
// A handful of posts, written to at a few instants, so that writes keep landing on the same buckets.
const at = fc.integer({ min: 0, max: 11 }).map((q) => new Date(BASE + q * 25 * MINUTE));
const metric = fc.tuple(fc.nat(50), fc.nat(20), fc.nat(5), fc.nat(3));
const post = fc.nat(7);
const command = fc.oneof(
  fc.record({ op: fc.constant('insert' as const), status: fc.constantFrom('published', 'draft', 'scheduled'), at, p2: fc.boolean() }),
  fc.record({ op: fc.constant('publish' as const), post, at }),
  fc.record({ op: fc.constant('unpublish' as const), post }),
  fc.record({ op: fc.constant('republish' as const), post, at }),
  fc.record({ op: fc.constant('softDelete' as const), post }),
  fc.record({ op: fc.constant('hardDelete' as const), post }),
  fc.record({ op: fc.constant('noProject' as const), post }),
  fc.record({ op: fc.constant('moveProject' as const), post }),
  fc.record({ op: fc.constant('metrics' as const), post, m: metric }),
  fc.record({ op: fc.constant('dropMetrics' as const), post }),
  fc.record({ op: fc.constant('timezone' as const), zone: fc.constantFrom(...ZONES) }),
);
type Command = typeof command extends fc.Arbitrary<infer C> ? C : never;

/** One write of the property tests, to the posts `ids` of the workspace's two projects. */
async function apply(k: Knex, ws: { id: string }, [p1, p2]: [string, string], ids: string[], c: Command) {
  const pick = async (n: number) => {
    const id = ids[n % Math.max(1, ids.length)];
    return id ? await k('posts').where({ id }).first() : undefined;
  };
  const row = c.op === 'insert' || c.op === 'timezone' ? undefined : await pick(c.post);
  if (c.op === 'insert') {
    const r = postRow(ws, c.p2 ? p2 : p1, c.status, c.status === 'published' ? c.at : null);
    await k('posts').insert(r);
    ids.push(r.id);
  } else if (c.op === 'timezone') {
    await k('projects').where({ id: p1 }).update({ timezone: c.zone });
  } else if (!row) {
    return;
  } else if (c.op === 'publish' || c.op === 'republish') {
    if (c.op === 'publish' && row.status === 'published') return;
    await k('posts').where({ id: row.id }).update({ status: 'published', published_at: c.at });
  } else if (c.op === 'unpublish') {
    await k('posts').where({ id: row.id }).update({ status: 'failed_to_publish' });
  } else if (c.op === 'softDelete') {
    await k('posts').where({ id: row.id }).update({ deleted_at: new Date() });
  } else if (c.op === 'hardDelete') {
    await k('posts').where({ id: row.id }).delete();
  } else if (c.op === 'noProject') {
    await k('posts').where({ id: row.id }).update({ project_id: null });
  } else if (c.op === 'moveProject') {
    await k('posts')
      .where({ id: row.id })
      .update({ project_id: row.project_id === p1 ? p2 : p1 });
  } else if (c.op === 'metrics') {
    const [impressions, reactions, comments, reshares] = c.m;
    const updated = await k('post_metric_state').where({ post_id: row.id }).update({ impressions, reactions, comments, reshares });
    if (updated === 0 && row.project_id) await k('post_metric_state').insert(metricsRow(row, c.m));
  } else if (c.op === 'dropMetrics') {
    await k('post_metric_state').where({ post_id: row.id }).delete();
  }
}

describe('analytics overview: the rollup the database keeps (post_publish_hours)', function () {
  this.timeout(300_000);

  it('stays the aggregate of the posts under any sequence of writes to posts and their metrics', async () => {
    const ws = await workspaceWithKey({ projects: 2 });
    const [p1, p2] = ws.projects.map((p) => p.id) as [string, string];
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 30 }), async (commands) => {
        runs++;
        await db()('posts').where({ workspace_id: ws.workspace.id }).delete();
        await assertNoDrift(ws.workspace.id, 'after the clean-up');
        const ids: string[] = [];
        for (const [i, c] of commands.entries()) {
          await apply(db(), ws.workspace, [p1, p2], ids, c);
          await assertNoDrift(ws.workspace.id, `after command ${i} of ${JSON.stringify(commands)}`);
        }
        // And the overview of the project, in whatever timezone it ended in, is the plain sum.
        const project = await db()('projects').where({ id: p1 }).first('id', 'workspace_id', 'timezone');
        await assertOverviewIsThePlainSum(project, '2031-03-09', '2031-03-11');
        await assertOverviewIsThePlainSum(project, '2031-03-10', '2031-03-10');
        // And the cross-workspace overview's totals over both projects, in UTC days.
        for (const [from, to] of [
          ['2031-03-09', '2031-03-11'],
          ['2031-03-10', '2031-03-10'],
        ] as const) {
          const { start, end } = periodBounds(from, to, 'UTC');
          // Read whole (both projects) and narrowed to the second, as a plain member reads it.
          for (const projectIds of [null, new Set([p2])]) {
            const reach = { workspaceId: ws.workspace.id, projectIds };
            assert.deepEqual(
              (await periodTotals(db(), [reach], start, end)).get(ws.workspace.id),
              {
                projects: projectIds?.size ?? 2,
                totals: await plainTotals(ws.workspace.id, projectIds ? [...projectIds] : [p1, p2], start, end),
              },
              `cross-workspace totals ${from}..${to} (${projectIds ? 'narrowed' : 'whole'}) after ${JSON.stringify(commands)}`,
            );
          }
        }
      }),
      { numRuns: 40 },
    );
    assert.equal(runs, 40);
  });

  it('the overview answers what the sum over its posts answers, for zones whose offset is not whole hours and periods cut inside hours', async () => {
    const ws = await workspaceWithKey({ projects: 0 });
    const base = Date.parse('2031-03-25T00:00:00Z');
    // Posts at instants near local midnights of every zone: within 90 minutes of a UTC quarter-hour.
    const post = fc.record({
      at: fc
        .integer({ min: -6 * 24 * 4, max: 6 * 24 * 4 })
        .chain((q) => fc.integer({ min: -90, max: 90 }).map((m) => base + q * 15 * MINUTE + m * MINUTE)),
      published: fc.boolean(),
      metrics: fc.option(fc.tuple(fc.nat(100), fc.nat(9), fc.nat(2), fc.nat(1)), { nil: null }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ZONES),
        fc.array(post, { minLength: 0, maxLength: 60 }),
        fc.integer({ min: -5, max: 3 }),
        fc.integer({ min: 1, max: 6 }),
        async (zone, posts, offset, days) => {
          const project = await createProject({ workspaceId: ws.workspace.id, type: 'PERSONAL_BRAND', name: 'Rollup', timezone: zone });
          const rows = posts.map((p) =>
            postRow(ws.workspace, project.id, p.published ? 'published' : 'draft', p.published ? new Date(p.at) : null),
          );
          if (rows.length) await db()('posts').insert(rows);
          const metrics = posts.flatMap((p, i) => (p.metrics && p.published ? [metricsRow(rows[i]!, p.metrics)] : []));
          if (metrics.length) await db()('post_metric_state').insert(metrics);
          await assertNoDrift(ws.workspace.id);
          const from = addDays('2031-03-25', offset);
          await assertOverviewIsThePlainSum(
            { id: project.id, workspace_id: ws.workspace.id, timezone: zone },
            from,
            addDays(from, days - 1),
          );
        },
      ),
      { numRuns: 60 },
    );
  });

  describe('concurrent writers: one lock order, no drift, no deadlock', () => {
    /** `first` in one transaction, then `second` in another, which must wait for the first's locks; then both commit. */
    async function interleaved(first: (t: Knex.Transaction) => Promise<unknown>, second: (t: Knex.Transaction) => Promise<unknown>) {
      const a = await db().transaction();
      const b = await db().transaction();
      try {
        await first(a);
        const pid = (await b.raw('select pg_backend_pid() as pid')).rows[0].pid;
        // A knex query runs when awaited: started here, it waits while the first holds its locks.
        const waiting = (async () => second(b))();
        waiting.catch(() => {});
        await waitFor(
          async () => (await db().raw(`select 1 from pg_stat_activity where pid = ? and wait_event_type = 'Lock'`, [pid])).rows.length > 0,
          10_000,
          'the second writer waits for the first',
        );
        await a.commit();
        await waiting;
        await b.commit();
      } finally {
        if (!a.isCompleted()) await a.rollback();
        if (!b.isCompleted()) await b.rollback();
      }
    }

    async function publishedWithMetrics() {
      const ws = await workspaceWithKey();
      const post = postRow(ws.workspace, ws.project.id, 'published', new Date('2031-03-10T09:30:00Z'));
      await db()('posts').insert(post);
      await db()('post_metric_state').insert(metricsRow(post, [100, 10, 2, 1]));
      await assertNoDrift(ws.workspace.id);
      return { ws, post };
    }

    const setMetrics = (t: Knex.Transaction, postId: string, reactions: number) =>
      t('post_metric_state').where({ post_id: postId }).update({ impressions: 50, reactions, comments: 0, reshares: 0 });
    const unpublish = (t: Knex.Transaction, postId: string) => t('posts').where({ id: postId }).update({ status: 'failed_to_publish' });

    it('the sync writes a post’s metrics (going down) while the post is unpublished', async () => {
      const { ws, post } = await publishedWithMetrics();
      await interleaved(
        (t) => setMetrics(t, post.id, 3),
        (t) => unpublish(t, post.id),
      );
      await assertNoDrift(ws.workspace.id);
      assert.deepEqual(await keptHours(ws.workspace.id), []);
    });

    it('a post is unpublished while the sync writes its metrics', async () => {
      const { ws, post } = await publishedWithMetrics();
      await interleaved(
        (t) => unpublish(t, post.id),
        (t) => setMetrics(t, post.id, 3),
      );
      await assertNoDrift(ws.workspace.id);
      assert.deepEqual(await keptHours(ws.workspace.id), []);
    });

    it('a post’s metrics row is inserted while the post is unpublished, in either order', async () => {
      for (const order of ['insert first', 'unpublish first']) {
        const ws = await workspaceWithKey();
        const post = postRow(ws.workspace, ws.project.id, 'published', new Date('2031-03-10T09:30:00Z'));
        await db()('posts').insert(post);
        const insert = (t: Knex.Transaction) => t('post_metric_state').insert(metricsRow(post, [100, 10, 2, 1]));
        if (order === 'insert first') await interleaved(insert, (t) => unpublish(t, post.id));
        else await interleaved((t) => unpublish(t, post.id), insert);
        await assertNoDrift(ws.workspace.id, order);
        assert.equal((await db()('post_metric_state').where({ post_id: post.id }).first()).counted_at, null, order);
        assert.deepEqual(await keptHours(ws.workspace.id), [], order);
      }
    });

    it('a metrics row is inserted while its post is published', async () => {
      const ws = await workspaceWithKey();
      const post = postRow(ws.workspace, ws.project.id, 'scheduled', null);
      await db()('posts').insert(post);
      const at = new Date('2031-03-10T09:30:00Z');
      await interleaved(
        (t) => t('posts').where({ id: post.id }).update({ status: 'published', published_at: at }),
        (t) => t('post_metric_state').insert(metricsRow({ ...post, published_at: at }, [100, 10, 2, 1])),
      );
      await assertNoDrift(ws.workspace.id);
      assert.deepEqual(
        (await keptHours(ws.workspace.id)).map((h) => [h.posts, Number(h.impressions), Number(h.reactions)]),
        [[1, 100, 10]],
      );
    });

    it('a post is deleted (its metrics row with it) while the sync writes its metrics', async () => {
      const { ws, post } = await publishedWithMetrics();
      await interleaved(
        (t) => t('posts').where({ id: post.id }).delete(),
        (t) => setMetrics(t, post.id, 3),
      );
      await assertNoDrift(ws.workspace.id);
      assert.deepEqual(await keptHours(ws.workspace.id), []);
    });
  });

  it("a project's deletion takes its buckets with it; its posts, left without a project, count nowhere", async () => {
    const ws = await workspaceWithKey({ projects: 2 });
    const [a, b] = ws.projects;
    const rows = [a!, b!].map((p) => postRow(ws.workspace, p.id, 'published', new Date('2031-03-10T09:30:00Z')));
    await db()('posts').insert(rows);
    await db()('post_metric_state').insert(rows.map((r) => metricsRow(r, [100, 10, 2, 1])));
    await db()('projects').where({ id: b!.id }).delete();
    await assertNoDrift(ws.workspace.id);
    assert.deepEqual(
      (await keptHours(ws.workspace.id)).map((h) => h.project_id),
      [a!.id],
    );
  });
});

describe('analytics overview: the rollup backfilled online after its migration', function () {
  this.timeout(300_000);
  const ROLLUP = '20261203120000_post_publish_hours.ts';
  const url = (() => {
    const u = new URL(process.env.DATABASE_URL!);
    u.pathname = `${u.pathname}_rollup`;
    return u.toString();
  })();
  let k: Knex;
  let ws: { id: string };
  let projects: [string, string];

  before(async () => {
    await createEmptyDatabase(url);
    k = createKnex(url);
    await migrateLatest(k);
    // The workspace and its two projects, copied from the test database's rows.
    const made = await workspaceWithKey({ projects: 2 });
    await k('workspaces').insert(await db()('workspaces').where({ id: made.workspace.id }).first());
    for (const p of made.projects)
      await k('projects').insert({ ...(await db()('projects').where({ id: p.id }).first()), connection_id: null });
    ws = made.workspace;
    projects = made.projects.map((p) => p.id) as [string, string];
  });
  after(async () => {
    await k?.destroy();
    await dropDatabase(url);
  });

  /** The database as it was before the rollup's migration, holding `seed`'s posts, then migrated to the latest. */
  async function upgradedWith(seed: () => Promise<void>) {
    while ((await k.migrate.list())[0].some((m: { name: string }) => m.name === ROLLUP)) await k.migrate.down();
    await k('posts').delete();
    await seed();
    await migrateLatest(k);
  }
  const state = () => k('rollup_backfills').where({ name: 'post_publish_hours' }).first();
  const step = async (batch: number) => (await k.raw('select post_publish_hours_backfill_step(?) as read', [batch])).rows[0].read;

  it('a database without posts is done at once; the test database is', async () => {
    assert.ok((await db()('rollup_backfills').where({ name: 'post_publish_hours' }).first()).done_at);
    await upgradedWith(async () => {});
    assert.ok((await state()).done_at);
  });

  it('counts the posts already there in steps, while any writes go on, nothing counted twice or missed', async () => {
    const seedPost = fc.record({
      status: fc.constantFrom('published', 'published', 'draft', 'scheduled'),
      at,
      p2: fc.boolean(),
      metrics: fc.option(metric, { nil: null }),
    });
    const action = fc.oneof(
      { weight: 2, arbitrary: command },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('step' as const), batch: fc.integer({ min: 1, max: 4 }) }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(seedPost, { minLength: 1, maxLength: 12 }), fc.array(action, { maxLength: 25 }), async (seeds, actions) => {
        const ids: string[] = [];
        await upgradedWith(async () => {
          for (const p of seeds) {
            const r = postRow(ws, p.p2 ? projects[1] : projects[0], p.status, p.status === 'published' ? p.at : null);
            await k('posts').insert(r);
            if (p.metrics && p.status === 'published') await k('post_metric_state').insert(metricsRow(r, p.metrics));
            ids.push(r.id);
          }
        });
        assert.equal((await state()).done_at, null, 'the migration leaves the posts to the backfill');
        assert.deepEqual(await keptHours(ws.id, k), [], 'nothing is counted before the backfill');
        for (const a of actions) {
          if (a.op === 'step') await step(a.batch);
          else await apply(k, ws, projects, ids, a);
        }
        while ((await step(3)) !== null);
        const done = await state();
        assert.ok(done.done_at);
        await assertNoDrift(ws.id, `after ${JSON.stringify({ seeds, actions })}`, k);
      }),
      { numRuns: 25 },
    );
  });

  it('a step waits for a writer that met the mark, gives way after 100 ms, and reads what it committed', async () => {
    const post = postRow(ws, projects[0], 'scheduled', null);
    await upgradedWith(async () => {
      await k('posts').insert(post);
    });
    const writer = await k.transaction();
    try {
      await writer('posts')
        .where({ id: post.id })
        .update({ status: 'published', published_at: new Date('2031-03-10T09:30:00Z') });
      const t = Date.now();
      await assert.rejects(step(10), { code: '55P03' }, 'the writer holds the lock: the step gives way');
      assert.ok(Date.now() - t >= 100, 'after waiting 100 ms for it');
      // A step that waits for the writer goes ahead as soon as it commits.
      const waiting = step(10);
      await new Promise((r) => setTimeout(r, 30));
      await writer.commit();
      assert.equal(await waiting, 1);
    } finally {
      if (!writer.isCompleted()) await writer.rollback();
    }
    assert.ok((await state()).done_at);
    await assertNoDrift(ws.id, '', k);
    assert.deepEqual(
      (await keptHours(ws.id, k)).map((h) => h.posts),
      [1],
    );
  });

  it('while a step runs, a write to a post the mark has passed goes on; one beyond it waits for the step', async () => {
    const [covered, beyond] = [0, 1]
      .map(() => postRow(ws, projects[0], 'published', new Date('2031-03-10T09:30:00Z')))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    await upgradedWith(async () => {
      await k('posts').insert([covered!, beyond!]);
    });
    assert.equal(await step(1), 1, 'the mark passes the first post');
    const running = await k.transaction(); // a step holding the lock
    try {
      await running.raw(`select pg_advisory_xact_lock(hashtext('rollup-backfill:post_publish_hours'))`);
      const write = (id: string) =>
        k.transaction(async (t) => {
          await t.raw(`set local lock_timeout = '300ms'`);
          await t('posts')
            .where({ id })
            .update({ published_at: new Date('2031-03-10T10:30:00Z') });
        });
      await write(covered!.id);
      await assert.rejects(write(beyond!.id), { code: '55P03' });
    } finally {
      await running.rollback();
    }
    while ((await step(1)) !== null);
    await assertNoDrift(ws.id, '', k);
  });

  it('a step gives up on a metrics row a writer holds, and the next pass counts it', async () => {
    const post = postRow(ws, projects[0], 'published', new Date('2031-03-10T09:30:00Z'));
    await upgradedWith(async () => {
      await k('posts').insert(post);
      await k('post_metric_state').insert(metricsRow(post, [100, 10, 2, 1]));
    });
    const writer = await k.transaction();
    try {
      await writer('post_metric_state').where({ post_id: post.id }).forUpdate().first();
      clearRollupReadyCache(); // what this process saw of the test database's rollup
      const held = await advanceRollupBackfill(k, { budgetMs: 1_500, pauseMs: 100 });
      assert.equal(held.done, false);
      assert.ok(held.deferred >= 1, 'the step gave up on the row');
      assert.equal((await state()).done_at, null);
      await writer('post_metric_state').where({ post_id: post.id }).update({ impressions: 120 });
      await writer.commit();
    } finally {
      if (!writer.isCompleted()) await writer.rollback();
    }
    clearRollupReadyCache();
    assert.deepEqual(await advanceRollupBackfill(k), { counted: 1, deferred: 0, done: true });
    await assertNoDrift(ws.id, '', k);
    assert.deepEqual(
      (await keptHours(ws.id, k)).map((h) => [h.posts, Number(h.impressions)]),
      [[1, 120]],
    );
    clearRollupReadyCache();
  });

  it('until the backfill is done, the overviews read the posts, not the rollup', async () => {
    const made = await workspaceWithKey({ projects: 1 });
    const project = await db()('projects').where({ id: made.project.id }).first('id', 'workspace_id', 'timezone');
    const rows = [0, 1, 2, 30].map((h) => postRow(made.workspace, project.id, 'published', new Date(BASE + h * 60 * MINUTE)));
    await db()('posts').insert(rows);
    await db()('post_metric_state').insert(rows.map((r, i) => metricsRow(r, [100 * (i + 1), 10, 2, 1])));
    // The test database's rollup is complete; as if it were not, and had missed this workspace:
    const kept = await db()('post_publish_hours').where({ workspace_id: made.workspace.id });
    await db()('post_publish_hours').where({ workspace_id: made.workspace.id }).delete();
    await db()('rollup_backfills').where({ name: 'post_publish_hours' }).update({ done_at: null, through_id: 'post_~' });
    clearRollupReadyCache();
    try {
      await assertOverviewIsThePlainSum(project, '2031-03-09', '2031-03-11');
      assert.equal((await projectOverview(project, '2031-03-09', '2031-03-11')).totals.posts, 4);
      const { start, end } = periodBounds('2031-03-09', '2031-03-11', 'UTC');
      assert.deepEqual(
        (await periodTotals(db(), [{ workspaceId: made.workspace.id, projectIds: null }], start, end)).get(made.workspace.id),
        {
          projects: 1,
          totals: await plainTotals(made.workspace.id, [project.id], start, end),
        },
      );
    } finally {
      await db()('rollup_backfills').where({ name: 'post_publish_hours' }).update({ done_at: db().fn.now(), through_id: null });
      await db()('post_publish_hours').insert(kept);
      clearRollupReadyCache();
    }
    await assertNoDrift(made.workspace.id);
  });
});
