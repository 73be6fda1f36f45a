import assert from 'node:assert/strict';
import { createProject } from '../../admin/provision';
import { client } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';
import { generationBody, startHarness, type Harness } from './support';

// spec 4.8 GET /v1/jobs: cursor-paginated, newest first, filtered by status, type and projectId
// (docs/generation.md). No worker runs here, so the jobs stay where the test puts them.

describe('GET /v1/jobs', function () {
  this.timeout(60_000);
  let h: Harness;
  let call: ReturnType<typeof client>;
  let ws: Awaited<ReturnType<typeof workspaceWithKey>>;
  let second: { id: string };
  const ids = { queued: [] as string[], cancelled: [] as string[], second: [] as string[] };

  before(async () => {
    h = await startHarness({ worker: false });
    ws = await workspaceWithKey();
    call = client(h.api.url, ws.key);
    second = await createProject({ workspaceId: ws.workspace.id, type: 'PERSONAL_BRAND', name: 'Second' });
    for (let i = 0; i < 6; i++) {
      const r = await call('POST', '/v1/posts/generations', { body: generationBody(ws.project.id) });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      if (i % 2) {
        assert.equal((await call('POST', `/v1/jobs/${r.body.data.id}/cancel`)).status, 200);
        ids.cancelled.push(r.body.data.id);
      } else ids.queued.push(r.body.data.id);
    }
    for (let i = 0; i < 2; i++)
      ids.second.push((await call('POST', '/v1/posts/generations', { body: generationBody(second.id) })).body.data.id);
  });
  after(async () => {
    // Leave nothing queued for a later suite's worker.
    for (const id of [...ids.queued, ...ids.second]) await call('POST', `/v1/jobs/${id}/cancel`);
    await h.close();
  });

  async function all(query: string, limit = 3): Promise<any[]> {
    const out: any[] = [];
    let cursor: string | null = null;
    do {
      const r: any = await call('GET', `/v1/jobs?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.ok(r.body.data.length <= limit);
      out.push(...r.body.data);
      cursor = r.body.pagination.next_cursor;
      assert.equal(r.body.pagination.has_more, cursor !== null);
    } while (cursor);
    return out;
  }

  it('pages through every job of the workspace, newest first, as Job resources', async () => {
    const jobs = await all('');
    assert.equal(jobs.length, 8);
    assert.deepEqual(new Set(jobs.map((j) => j.id)), new Set([...ids.queued, ...ids.cancelled, ...ids.second]));
    for (let i = 1; i < jobs.length; i++) {
      const [a, b] = [jobs[i - 1], jobs[i]];
      assert.ok(a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id), 'createdAt desc, then id desc');
    }
    assert.equal(jobs[0].type, 'POST_GENERATION');
    assert.equal('input' in jobs[0], false);
  });

  it('filters by status (comma-separated), type and projectId', async () => {
    assert.deepEqual(new Set((await all('&status=CANCELLED')).map((j) => j.id)), new Set(ids.cancelled));
    assert.equal((await all('&status=QUEUED,CANCELLED')).length, 8);
    assert.deepEqual(new Set((await all(`&projectId=${second.id}`)).map((j) => j.id)), new Set(ids.second));
    assert.equal((await all(`&projectId=${ws.project.id}&status=QUEUED`)).length, 3);
    assert.equal((await all('&type=POST_GENERATION', 50)).length, 8);
    assert.equal((await all('&status=DONE')).length, 0);
  });

  it('refuses unknown filter values, foreign projects, bad limits and a cursor reused under other filters', async () => {
    assertError(await call('GET', '/v1/jobs?status=FINISHED'), 400, 'invalid_request');
    assertError(await call('GET', '/v1/jobs?type=IMAGE'), 400, 'invalid_request');
    assertError(await call('GET', '/v1/jobs?colour=blue'), 400, 'invalid_request');
    assertError(await call('GET', '/v1/jobs?limit=0'), 400, 'bad_pagination');
    assertError(await call('GET', '/v1/jobs?limit=two'), 400, 'bad_pagination');
    const other = await workspaceWithKey();
    assertError(await call('GET', `/v1/jobs?projectId=${other.project.id}`), 404, 'not_found');
    const page = await call('GET', '/v1/jobs?limit=2&status=QUEUED');
    assertError(
      await call('GET', `/v1/jobs?limit=2&status=CANCELLED&cursor=${encodeURIComponent(page.body.pagination.next_cursor)}`),
      400,
      'bad_cursor',
    );
    // Another workspace sees none of these.
    const theirs = await client(h.api.url, other.key)('GET', '/v1/jobs');
    assert.deepEqual(theirs.body.data, []);
  });

  it('clamps limit to 200', async () => {
    const r = await call('GET', '/v1/jobs?limit=5000');
    assert.equal(r.status, 200);
    assert.equal(r.body.data.length, 8);
  });
});
