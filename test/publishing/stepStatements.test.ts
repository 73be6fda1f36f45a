import assert from 'node:assert/strict';
import { createPublishingActivities } from '../../activities/publishing';
import { db } from '../../lib/db';
import { createNetworkClient } from '../../lib/network/client';
import type { Client } from '@temporalio/client';
import { syncPostSchedule } from '../../lib/posts/afterCommit';
import { insertPost } from '../../lib/posts/write';
import { workspaceWithKey } from '../support/factories';
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
    const statements: string[] = [];
    const onQuery = (q: { sql: string }) => statements.push(q.sql);
    db().on('query', onQuery);
    let result;
    try {
      result = await acts.publishPost({
        postId: committed.post.id,
        version: committed.post.schedule_version,
        attempt: 1,
        retryUntilMs: Date.now() + 3_600_000,
      });
    } finally {
      db().removeListener('query', onQuery);
    }
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

  it("a scheduled post's workflow gets the project's zone from the write itself: no read of the project", async () => {
    const { workspace } = await workspaceWithKey({ projects: 0 });
    const { project } = await connectedPersonalProject(workspace.id);
    await db()('projects').where({ id: project.id }).update({ timezone: 'Asia/Kolkata' });
    const committed = await db().transaction((trx) =>
      insertPost(trx, {
        workspaceId: workspace.id,
        projectId: project.id,
        content: 'Zoned',
        contentType: 'PERSONAL',
        scheduledAt: new Date(Date.now() + 3_600_000),
      }),
    );
    const starts: Array<{ args: unknown[] }> = [];
    const client = { workflow: { signalWithStart: async (_type: string, opts: { args: unknown[] }) => void starts.push(opts) } };
    const statements: string[] = [];
    const onQuery = (q: { sql: string }) => statements.push(q.sql);
    db().on('query', onQuery);
    try {
      await syncPostSchedule(client as unknown as Client, db(), committed.post);
    } finally {
      db().removeListener('query', onQuery);
    }
    assert.deepEqual(
      (starts[0]?.args[0] as { schedule?: { timeZone?: string } }).schedule?.timeZone,
      'Asia/Kolkata',
      'the snapshot carries the zone',
    );
    // The post's turn among its workspace's posts of that time (lib/publishing/turns.ts), then the synced version.
    assert.equal(statements.length, 2, `the turn and the synced version's UPDATE: ${statements.join('\n')}`);
    assert.match(statements[0]!, /^select count\(\*\)/);
    assert.match(statements[1]!, /^update "posts"/);
  });
});
