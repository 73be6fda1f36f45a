import assert from 'node:assert/strict';
import { admin } from '../support/admin';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';

// bin/admin `idea create` and `seed ideas` as an operator runs them (a separate process on the
// test database); what they write is then read back through the API.

describe('operator CLI: ideas', function () {
  this.timeout(60_000);
  const api = useApi();

  it('idea create and seed ideas write ideas the API serves', async () => {
    const ws = await workspaceWithKey();
    const created = await admin([
      'idea',
      'create',
      '--project',
      ws.project.id,
      '--title',
      'From the CLI',
      '--pillar',
      'Education',
      '--scheduled-for',
      '2031-02-03',
      '--status',
      'in_production',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const idea = JSON.parse(created.stdout);
    assert.match(idea.id, /^idea_/);
    const call = client(api.url, ws.key);
    const got = await call('GET', `/v1/ideas/${idea.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body.data, idea);
    assert.equal(idea.status, 'in_production');
    assert.equal(idea.scheduledFor, '2031-02-03');

    const seeded = await admin(['idea', 'seed', '--project', ws.project.id, '--count', '10']);
    assert.equal(seeded.code, 0, seeded.stderr);
    assert.equal(JSON.parse(seeded.stdout).count, 10);
    const list = await call('GET', `/v1/ideas?projectId=${ws.project.id}&limit=50`);
    assert.equal(list.body.data.length, 11);
    assert.ok(list.body.data.some((i: { status: string }) => i.status === 'in_production'));
    assert.ok(list.body.data.some((i: { scheduledFor: string | null }) => i.scheduledFor !== null));

    const missing = await admin(['idea', 'create', '--project', 'proj_missing', '--title', 'x']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no project proj_missing/);
    const bad = await admin(['idea', 'create', '--project', ws.project.id, '--title', 'x', '--status', 'done']);
    assert.equal(bad.code, 2);
  });
});
