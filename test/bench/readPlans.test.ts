import assert from 'node:assert/strict';
import pg from 'pg';
import type { Knex } from 'knex';
import { dropDatabase, recreateDatabase } from '../../tooling/databases';
import { startServer, type ServerHandle } from '../../bench/harness/servers';
import type { CapturedStatement } from '../../bench/harness/statements';
import { indexScansOn, plansAsSent } from '../../bench/reads/plans';
import { seedReads, type Seeded } from '../../bench/reads/seed';
import { readSurfaces } from '../../bench/reads/surfaces';
import { createKnex } from '../../lib/db';

// The plan of every list read at scale (issue 36, "Reads at a million posts"): the statements the
// API sends for each read (captured at the pg driver in the API's process, bench/harness/
// statements.ts), explained with their parameters on a database seeded by the reads bench's SQL
// seed and analyzed, so the planner chooses with real statistics: the page must come from an
// index scan on the workspace's rows, and no statement may scan the posts whole. (At this size a
// small table joined to a few rows, the notes behind a month's slots, may still be read whole:
// cheaper here, and chosen honestly; bench/README.md, reads, has the plans at 1,000,000.)
// A later change that loses an index (or writes a query no index serves) fails here.

const POSTS = 50_000;

describe('read plans at scale (bench/reads)', function () {
  this.timeout(300_000);
  const base = new URL(process.env.DATABASE_URL!);
  base.pathname = `/content_scheduler_test_plans_${process.pid}`;
  const url = base.toString();
  let k: Knex;
  let pool: pg.Pool;
  let api: ServerHandle;
  let seeded: Seeded;

  before(async () => {
    await recreateDatabase(url);
    k = createKnex(url);
    seeded = await seedReads(k, { posts: POSTS });
    pool = new pg.Pool({ connectionString: url, max: 2 });
    api = await startServer('plans-api', 'bench/harness/serve-app.ts', {
      ...process.env,
      DATABASE_URL: url,
      LOG_LEVEL: 'error',
      DB_POOL_MAX: '4',
    });
  });

  after(async () => {
    await api?.stop();
    await pool?.end();
    await k?.destroy();
    await dropDatabase(url);
  });

  for (const which of ['largest', 'small'] as const) {
    it(`every list read of the ${which} workspace pages from an index; no read scans a large table`, async () => {
      assert.ok(seeded.largest.posts >= POSTS / 20, `the largest workspace holds ${seeded.largest.posts} posts`);
      const failures: string[] = [];
      const w = seeded[which];
      // An index condition that holds a read to the workspace's rows (its own, a project's or an
      // endpoint's), a join's probe by another row's key (a post's primary key from its slot), or
      // one row by its primary key.
      const scoped =
        /\((workspace_id|project_id|endpoint_id)\)::text = |= \(?[a-z_0-9]+\.[a-z_0-9]+\)?(::text)?\)$|^\(\(?id\)?(::text)? = /;
      const client = await pool.connect();
      for (const s of readSurfaces(w)) {
        const c = await api.call<{ status: number; statements: CapturedStatement[] }>('statements', { path: s.path, headers: s.headers });
        assert.equal(c.status, 200, `${s.surface}: ${s.path} answered ${c.status}`);
        const plans: string[] = [];
        for (const st of c.statements) {
          if (/^\s*(begin|commit|rollback|start transaction|set )/i.test(st.text)) continue;
          // With its values, and for a prepared statement its generic plan too.
          for (const p of await plansAsSent(client, st)) {
            plans.push(p);
            for (const t of ['posts', s.list?.table])
              if (t && new RegExp(`Seq Scan on ${t}\\b`).test(p)) failures.push(`${s.surface}: sequential scan of ${t}\n${st.text}\n${p}`);
          }
        }
        if (!s.list) continue;
        const table = s.list.table;
        // Every plan that reads the table does so through an index held to the workspace's rows.
        const reading = plans.filter((p) => new RegExp(`\\bon ${table}\\b|Index Scan on ${table}_`).test(p));
        if (reading.length === 0) failures.push(`${s.surface}: no statement reads ${table}:\n${plans.join('\n\n')}`);
        for (const p of reading) {
          const scans = indexScansOn(p, table);
          if (scans.length === 0) failures.push(`${s.surface}: ${table} read by no index scan\n${p}`);
          for (const x of scans)
            if (!scoped.test(x.cond)) failures.push(`${s.surface}: ${x.index} scanned beyond the workspace's rows (${x.cond})\n${p}`);
          // In the largest workspace, a plan that reads the table through more than its primary
          // key reads it through the read's own index (the text-search index of knowledge search,
          // the calendar's index in its order): without it, a search walks the workspace's
          // documents and probes each one's chunks, and the calendar sorts its whole range. A
          // small workspace's few rows may honestly be read otherwise.
          const own = which === 'largest' ? s.list.index : undefined;
          if (own && scans.some((x) => x.index !== `${table}_pkey`) && !scans.some((x) => x.index === own))
            failures.push(`${s.surface}: ${table} read without ${own}\n${p}`);
        }
      }
      client.release();
      assert.deepEqual(failures, []);
    });
  }
});
