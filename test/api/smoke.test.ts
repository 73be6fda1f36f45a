import assert from 'node:assert/strict';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';

describe('REST foundation smoke', () => {
  const api = useApi();

  it('creates, lists and reads a post', async () => {
    const { key, project } = await workspaceWithKey();
    const call = client(api.url, key);
    const created = await call('POST', '/v1/posts', { body: { projectId: project.id, content: 'Hello world\nsecond line' } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.data.status, 'draft');
    assert.equal(created.headers.get('idempotent-replayed'), 'false');
    const list = await call('GET', `/v1/posts?projectId=${project.id}`);
    assert.equal(list.status, 200);
    assert.equal(list.body.data.length, 1);
    assert.equal(list.body.pagination.has_more, false);
    const me = await call('GET', '/v1/workspaces/me');
    assert.equal(me.body.data.principal.type, 'api_key');
  });
});
