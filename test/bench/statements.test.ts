import assert from 'node:assert/strict';
import pg from 'pg';
import { createApp } from '../../api/app';
import { captureRequest, replayer } from '../../bench/harness/statements';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { serveOnEphemeralPort } from '../support/app';
import { workspaceWithKey } from '../support/factories';

// The benches' same-statements baseline (bench/harness/statements.ts, bench/README.md "Read
// surfaces"): the statements of one API request are captured in the API's process, with their
// parameters, and the replay runs exactly those against Postgres.

describe('bench/harness/statements', function () {
  this.timeout(60_000);

  it("captures one request's statements with their parameters and replays them", async () => {
    const api = await serveOnEphemeralPort(createApp());
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 2 });
    try {
      const ws = await workspaceWithKey();
      await db()('posts').insert({
        id: 'post_statements0000000000001',
        workspace_id: ws.workspace.id,
        project_id: ws.project.id,
        status: 'draft',
        content: 'x',
      });
      const { status, statements } = await captureRequest(api.server, {
        path: `/v1/posts?projectId=${ws.project.id}&limit=5`,
        headers: { authorization: `Bearer ${ws.key}` },
      });
      assert.equal(status, 200);
      // The warm-up request went first: the API key is cached, so the captured request reads
      // the project and the page, with this workspace's and project's ids among the parameters.
      assert.ok(statements.length >= 1, JSON.stringify(statements));
      const page = statements.find((s) => /from "?posts"?/i.test(s.text) && s.values.includes(ws.project.id));
      assert.ok(page, statements.map((s) => s.text).join('\n'));
      assert.ok(page.values.includes(ws.workspace.id));
      for (const s of statements) assert.ok(s.endMs >= s.startMs);
      // The replay sends the same statements: Postgres answers them (no syntax or parameter
      // error) and the page statement finds the post.
      await replayer(pool, statements)();
      const rows = await pool.query({ text: page.text, values: page.values as string[] });
      assert.ok(rows.rows.some((r: { id: string }) => r.id === 'post_statements0000000000001'));
    } finally {
      await pool.end();
      await api.close();
    }
  });
});
