import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { CLIENT_SCHEMA_PATH, generateClientSchema } from '../../tooling/openapiClient';
import { startApi, typedClient, type TestServer } from '../support/app';
import { workspaceWithKey } from '../support/factories';

// The typed client (client/): its types are generated from the OpenAPI document and committed;
// this fails when the document changed and `npm run client:generate` was not run.
describe('typed client generated from the OpenAPI document', function () {
  this.timeout(120_000);

  it('client/schema.d.ts is what the current document generates', async () => {
    const committed = await readFile(CLIENT_SCHEMA_PATH, 'utf8');
    const generated = await generateClientSchema();
    assert.ok(
      committed === generated,
      'client/schema.d.ts is out of date with the OpenAPI document: run `npm run client:generate` and commit the result',
    );
    for (const path of ['"/v1/posts"', '"/v1/posts/{postId}"', '"/v1/openapi.json"'])
      assert.ok(generated.includes(`${path}: {`), `${path} in the generated paths`);
  });

  describe('drives the real API', () => {
    let api: TestServer;
    before(async () => {
      api = await startApi();
    });
    after(() => api.close());

    it('creates, reads, updates and lists a post, and returns the error envelope typed', async () => {
      const ws = await workspaceWithKey();
      const rest = typedClient(api.url, ws.key);
      const created = await rest.POST('/v1/posts', { body: { projectId: ws.project.id, content: 'Typed hello' } });
      assert.equal(created.response.status, 200, JSON.stringify(created.error));
      const id = created.data!.data.id;
      const got = await rest.GET('/v1/posts/{postId}', { params: { path: { postId: id } } });
      assert.equal(got.data?.data.content, 'Typed hello');
      const patched = await rest.PATCH('/v1/posts/{postId}', { params: { path: { postId: id } }, body: { content: 'Typed again' } });
      assert.equal(patched.data?.data.content, 'Typed again');
      const page = await rest.GET('/v1/posts', { params: { query: { projectId: ws.project.id, limit: 10 } } });
      assert.deepEqual(
        page.data?.data.map((p) => p.id),
        [id],
      );
      const missing = await rest.GET('/v1/posts/{postId}', { params: { path: { postId: 'post_doesnotexist000000' } } });
      assert.equal(missing.response.status, 404);
      assert.equal(missing.error?.error.code, 'not_found');
      const anonymous = typedClient(api.url);
      const refused = await anonymous.GET('/v1/workspaces/me');
      assert.equal(refused.response.status, 401);
      assert.equal(refused.error?.error.code, 'unauthenticated');
    });
  });
});
