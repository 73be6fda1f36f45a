import assert from 'node:assert/strict';
import { createPublishingActivities } from '../../activities/publishing';
import { db } from '../../lib/db';
import { createNetworkClient } from '../../lib/network/client';
import type { Client } from '@temporalio/client';
import { syncPostSchedule } from '../../lib/posts/afterCommit';
import { insertPost } from '../../lib/posts/write';
import { publishTurnMs } from '../../lib/publishing/turns';
import { client, useApi } from '../support/app';
import { uniqueKey, workspaceWithKey } from '../support/factories';
import { statementsOf } from '../support/statements';
import { waitFor } from '../support/wait';
import { connectedPersonalProject } from '../support/network';

// The publish step's statements are its cost per post in a burst (docs/publishing.md
// "Capacity"): the lock with the workspace and project read, the token, the streak, one UPDATE
// that returns the row, the outbox event, inside BEGIN/COMMIT. A change that adds a round trip
// to every publish shows here, not only as a slower bench.
describe('publish step: statements per published post', () => {
  it('publishes a post in seven statements, the board status and the row read back by its UPDATE', async () => {
    const { workspace } = await workspaceWithKey({ projects: 0 });
    const { project } = await connectedPersonalProject(workspace.id);
    const committed = await db().transaction((trx) =>
      insertPost(trx, {
        workspaceId: workspace.id,
        projectId: project.id,
        content: 'Counted',
        contentType: 'PERSONAL',
        scheduledAt: new Date(Date.now() + 3_600_000),
      }),
    );
    const acts = createPublishingActivities({
      db: db(),
      network: createNetworkClient(),
      temporal: () => Promise.reject(new Error('the publish step needs no Temporal client')),
    });
    let result: Awaited<ReturnType<typeof acts.publishPost>> | undefined;
    const statements = (
      await statementsOf(async () => {
        result = await acts.publishPost({
          postId: committed.post.id,
          version: committed.post.schedule_version,
          attempt: 1,
          retryUntilMs: Date.now() + 3_600_000,
        });
      })
    ).map((q) => q.sql);
    assert.equal(result?.outcome, 'published');
    assert.equal(statements.length, 7, statements.join('\n'));
    const row = await db()('posts as p')
      .join('post_statuses as s', 's.id', 'p.status_id')
      .where('p.id', committed.post.id)
      .first('p.status', 's.category');
    assert.deepEqual({ ...row }, { status: 'published', category: 'published' });
    const events = await db()('outbox_events').where({ workspace_id: workspace.id, type: 'post.published' }).select('data');
    assert.equal(events.length, 1);
    assert.equal(events[0].data.post.status, 'published');
  });

  it("a scheduled post's workflow gets the project's zone and its turn from the write itself: no read of either", async () => {
    const { workspace } = await workspaceWithKey({ projects: 0 });
    const { project } = await connectedPersonalProject(workspace.id);
    await db()('projects').where({ id: project.id }).update({ timezone: 'Asia/Kolkata' });
    const at = new Date(Date.now() + 3_600_000);
    const insert = (content: string) =>
      db().transaction((trx) =>
        insertPost(trx, { workspaceId: workspace.id, projectId: project.id, content, contentType: 'PERSONAL', scheduledAt: at }),
      );
    const posts = [(await insert('Zoned')).post, (await insert('Zoned too')).post, (await insert('And a third')).post];
    const starts: Array<{ args: unknown[] }> = [];
    const client = { workflow: { signalWithStart: async (_type: string, opts: { args: unknown[] }) => void starts.push(opts) } };
    const statements = (
      await statementsOf(async () => {
        for (const post of posts) await syncPostSchedule(client as unknown as Client, db(), post);
      })
    ).map((q) => q.sql);
    const schedules = starts.map((s) => (s.args[0] as { schedule?: { timeZone?: string; turnMs?: number } }).schedule);
    assert.deepEqual(
      schedules.map((s) => s?.timeZone),
      ['Asia/Kolkata', 'Asia/Kolkata', 'Asia/Kolkata'],
      'the snapshot carries the zone',
    );
    // Each write counted the posts of that instant already written with a smaller id (the ids are
    // random); a read now counts all of them (lib/publishing/turns.ts).
    const written = schedules.map((s) => s?.turnMs);
    assert.deepEqual(written, [0, ...written.slice(1)], 'the first post of the instant takes turn 0');
    const byId = [...posts].sort((a, b) => (a.id < b.id ? -1 : 1));
    for (const [i, post] of posts.entries()) {
      const earlierWritten = posts.slice(0, i).filter((p) => p.id < post.id).length;
      assert.equal(written[i], earlierWritten, `post ${i}: the turn counts the earlier posts with a smaller id`);
      assert.equal(
        await publishTurnMs({ ...post, scheduled_at: at }),
        byId.indexOf(post),
        `post ${i}: the turn read now counts every smaller id`,
      );
    }
    // Only the synced version's UPDATE per post: the turn and the zone came with the row.
    assert.equal(statements.length, 3, statements.join('\n'));
    for (const sql of statements) assert.match(sql, /^update "posts" set "workflow_synced_version"/);
  });
});

// What a scheduled create costs the database (bench/README.md "population"): every statement is a
// round trip of the API process and a share of Postgres, at every create of a month's posts.
describe('a scheduled create through the API: statements', () => {
  const api = useApi();

  it('creates a scheduled post with an Idempotency-Key in nine statements, its slot and turn in its INSERT', async () => {
    const { key, workspace } = await workspaceWithKey({ projects: 0 });
    const { project } = await connectedPersonalProject(workspace.id);
    const call = client(api.url, key);
    const create = (i: number) =>
      call('POST', '/v1/posts', {
        body: { projectId: project.id, content: `Counted ${i}`, scheduledFor: new Date(Date.now() + 3_600_000).toISOString() },
        headers: { 'Idempotency-Key': uniqueKey() },
      });
    assert.equal((await create(0)).status, 200);
    const statements = (
      await statementsOf(async (sent) => {
        const res = await create(1);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        // The workflow's start, then the version it knows, follow the answer's COMMIT.
        await waitFor(async () => sent.some((q) => /workflow_synced_version/.test(q.sql)), 10_000, 'the synced version');
      })
    ).map((q) => q.sql);
    // BEGIN, the key's claim, SAVEPOINT, the post with its slot and turn, the outbox events,
    // RELEASE, the key's answer, COMMIT, the synced version (the project is a prepared read).
    assert.equal(statements.length, 9, statements.join('\n'));
    assert.match(
      statements[3]!,
      /insert into "calendar_slots"[\s\S]*insert into "posts"|insert into "posts"[\s\S]*insert into "calendar_slots"/,
    );
    const [{ n }] = await db()('calendar_slots').where({ project_id: project.id }).count({ n: '*' });
    assert.equal(Number(n), 2, 'each scheduled post has its slot');
  });
});
