import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { createKnex, db, migrateLatest } from '../../lib/db';
import { createEmptyDatabase, dropDatabase } from '../../tooling/databases';
import { client } from '../support/app';
import { scheduledPostRow, workspaceWithKey } from '../support/factories';
import { startApiProcess, type ApiProcess } from '../support/foundation';

// The calendar's pages on a database whose collation is not bytewise (ICU en-US, as most
// deployments' en_US.UTF-8 orders text; the suite's own database is C.UTF-8). The service merges
// its reads and breaks ties by id in Node, bytewise; each read after a cursor asks Postgres for
// the rows after the cursor's (instant or date, id). Were Postgres to compare those ids in the
// database's collation, where `idea_a…` comes before `idea_B…`, a page's read would start in
// another order than the page was cut in, and entries tied with a page's last would be skipped.

describe('calendar pages on a database that orders text by locale', function () {
  this.timeout(180_000);
  const url = (() => {
    const u = new URL(process.env.DATABASE_URL!);
    u.pathname = `${u.pathname}_icu`;
    return u.toString();
  })();
  let k: Knex;
  let api: ApiProcess;
  let ws: Awaited<ReturnType<typeof workspaceWithKey>>;

  before(async function () {
    // A server built without ICU cannot make such a database (Debian's and the docker image's can).
    if (Number((await db().raw(`select count(*) as n from pg_collation where collprovider = 'i'`)).rows[0].n) === 0) this.skip();
    await createEmptyDatabase(url, { icuLocale: 'en-US' });
    k = createKnex(url);
    await migrateLatest(k);
    // The workspace, its statuses, project and key, copied from the test database's rows.
    ws = await workspaceWithKey();
    const w = { workspace_id: ws.workspace.id };
    await k('workspaces').insert(await db()('workspaces').where({ id: ws.workspace.id }).first());
    await k('post_statuses').insert(await db()('post_statuses').where(w));
    await k('projects').insert({ ...(await db()('projects').where({ id: ws.project.id }).first()), connection_id: null });
    await k('api_keys').insert(await db()('api_keys').where(w));
    api = await startApiProcess({ DATABASE_URL: url });
  });
  after(async () => {
    await api?.close();
    await k?.destroy();
    await dropDatabase(url);
  });

  it('walks every entry tied on one date or instant once, ids in bytewise order, whatever their case', async () => {
    assert.equal((await k.raw(`select 'idea_a' < 'idea_B' as before`)).rows[0].before, true, 'the database orders text by locale');
    const row = { workspace_id: ws.workspace.id, project_id: ws.project.id };
    // Ids whose bytewise order (B, D, a, c) is not their order in the locale (a, B, c, D).
    const ids = (prefix: string) => ['a', 'B', 'c', 'D'].map((l) => `${prefix}_${l.repeat(4)}collation`);
    await k('ideas').insert(ids('idea').map((id) => ({ ...row, id, title: id, scheduled_for: '2031-06-02' })));
    for (const id of ids('post')) await k('posts').insert(scheduledPostRow(ws, id, new Date('2031-06-01T09:00:00Z')));

    const call = client(api.url, ws.key);
    const range = `projectId=${ws.project.id}&from=2031-06-01&to=2031-06-03`;
    const whole = await call('GET', `/v1/calendar?${range}`);
    assert.equal(whole.status, 200, JSON.stringify(whole.body));
    const all = whole.body.data.entries.map((e: any) => e.id);
    assert.deepEqual(all, [...ids('post').sort(), ...ids('idea').sort()]);
    assert.deepEqual(ids('idea').sort(), ['idea_BBBBcollation', 'idea_DDDDcollation', 'idea_aaaacollation', 'idea_cccccollation']);
    for (const limit of [1, 2, 3]) {
      const walked: string[] = [];
      let cursor: string | null = null;
      do {
        const res: any = await call('GET', `/v1/calendar?${range}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        walked.push(...res.body.data.entries.map((e: any) => e.id));
        cursor = res.body.data.nextCursor;
        assert.ok(walked.length <= all.length, `pages of ${limit} end`);
      } while (cursor !== null);
      assert.deepEqual(walked, all, `pages of ${limit}`);
    }
  });
});
