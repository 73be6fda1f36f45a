import assert from 'node:assert/strict';
import pg from 'pg';
import type { Knex } from 'knex';
import { recreateDatabase } from '../../bench/harness/database';
import { startServer, type ServerHandle } from '../../bench/harness/servers';
import type { CapturedStatement } from '../../bench/harness/statements';
import { seedReads, type Seeded } from '../../bench/reads/seed';
import { LARGE_TABLES, readSurfaces } from '../../bench/reads/surfaces';
import { createKnex } from '../../lib/db';

// The plan of every list read at scale (issue 36, "Reads at a million posts"): the statements the
// API sends for each read (captured at the pg driver in the API's process, bench/harness/
// statements.ts), explained with their parameters on a database seeded by the reads bench's SQL
// seed and analyzed, so the planner chooses with real statistics: the page must come from an
// index scan on the workspace's rows, and no statement may scan a table that grows with the posts.
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
    api = await startServer('plans-api', 'bench/harness/serve-app.ts', { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'error' });
  });

  after(async () => {
    await api?.stop();
    await pool?.end();
    await k?.destroy();
    const admin = new URL(url);
    admin.pathname = '/postgres';
    const c = new pg.Client({ connectionString: admin.toString() });
    await c.connect();
    await c.query(`drop database if exists "${base.pathname.slice(1)}" with (force)`);
    await c.end();
  });

  const plan = async (s: CapturedStatement) => {
    const values = s.values.map((v) => (v !== null && typeof v === 'object' ? Buffer.from(v.base64, 'base64') : v));
    const r = await pool.query(`explain ${s.text}`, values);
    return (r.rows as Array<{ 'QUERY PLAN': string }>).map((row) => row['QUERY PLAN']).join('\n');
  };

  for (const which of ['largest', 'small'] as const) {
    it(`every list read of the ${which} workspace pages from an index; no read scans a large table`, async () => {
      assert.ok(seeded.largest.posts >= POSTS / 20, `the largest workspace holds ${seeded.largest.posts} posts`);
      const failures: string[] = [];
      for (const s of readSurfaces(seeded[which])) {
        const c = await api.call<{ status: number; statements: CapturedStatement[] }>('statements', { path: s.path, headers: s.headers });
        assert.equal(c.status, 200, `${s.surface}: ${s.path} answered ${c.status}`);
        const plans: string[] = [];
        for (const st of c.statements) {
          if (/^\s*(begin|commit|rollback|start transaction|set )/i.test(st.text)) continue;
          const p = await plan(st);
          plans.push(p);
          for (const t of LARGE_TABLES)
            if (new RegExp(`Seq Scan on ${t}\\b`).test(p)) failures.push(`${s.surface}: sequential scan of ${t}\n${st.text}\n${p}`);
        }
        if (s.list) {
          const pages = plans.filter((p) => new RegExp(`\\bon ${s.list!.table}\\b`).test(p));
          assert.ok(pages.length > 0, `${s.surface}: no statement reads ${s.list.table}:\n${plans.join('\n\n')}`);
          if (!pages.some((p) => s.list!.plan.test(p))) failures.push(`${s.surface}: ${s.list.table} not paged by ${s.list.plan}\n${pages.join('\n\n')}`);
        }
      }
      assert.deepEqual(failures, []);
    });
  }
});
