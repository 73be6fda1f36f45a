// Knowledge documents and idea links from the operator CLI (issue 29 item 7): `knowledge add`
// and `idea link` run the API's own operations, so the result reads back over REST as a client's
// would, and a refusal is the operation's.

import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { waitFor } from '../support/wait';
import { useTestWorker } from '../support/worker';
import { fails, ok } from '../support/admin';

describe('operator CLI: knowledge documents and idea links', function () {
  this.timeout(300_000);
  const api = useApi();
  useTestWorker();

  it('adds text, file, URL and YouTube documents to a project or the workspace (knowledge add)', async () => {
    const ws = await workspaceWithKey();
    const call = client(api.url, ws.key);
    const finished = (jobId: string) =>
      waitFor(async () => {
        const j = (await call('GET', `/v1/jobs/${jobId}`)).body.data;
        return ['DONE', 'FAILED', 'CANCELLED'].includes(j.status) ? j : null;
      }, 90_000);

    const base = ['knowledge', 'add', '--workspace', ws.workspace.id];
    const inProject = [...base, '--project', ws.project.id];
    const text = 'Our studio ships every release with a 14-day rollback guarantee.';
    const queued = await ok([...inProject, '--text', text, '--name', 'Release policy', '--tag', 'policy']);
    assert.deepEqual([queued.type, queued.projectId], ['KNOWLEDGE_INGEST', ws.project.id]);
    const done = await finished(queued.id);
    assert.equal(done.status, 'DONE', JSON.stringify(done));
    const doc = (await call('GET', `/v1/knowledge/${done.result.documentId}`)).body.data;
    assert.deepEqual([doc.scope, doc.type, doc.name, doc.tags, doc.textPreview], ['PROJECT', 'text', 'Release policy', ['policy'], text]);

    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'admin-kb-'));
    const file = path.join(dir, 'brand.md');
    await fs.writeFile(file, '# Brand voice\n\nPlain words, short sentences, no jargon.\n');
    const fromFile = await ok([...base, '--scope', 'WORKSPACE', '--file', file]);
    assert.equal(fromFile.projectId, null);
    const fileDone = await finished(fromFile.id);
    assert.equal(fileDone.status, 'DONE', JSON.stringify(fileDone));
    const fileDoc = (await call('GET', `/v1/knowledge/${fileDone.result.documentId}`)).body.data;
    assert.deepEqual([fileDoc.scope, fileDoc.type], ['WORKSPACE', 'file']);
    assert.match(fileDoc.textPreview, /Plain words, short sentences/);

    // URL and YouTube documents are queued as the API queues them (their fetch is the worker's).
    const page = await ok([...inProject, '--url', 'https://example.com/about']);
    assert.equal(page.type, 'KNOWLEDGE_INGEST');
    const video = await ok([...inProject, '--youtube', 'https://youtu.be/dQw4w9WgXcQ']);
    assert.equal(video.type, 'KNOWLEDGE_INGEST');
    const listed = await ok(['knowledge', 'list', '--workspace', ws.workspace.id]);
    assert.ok(JSON.stringify(listed).includes(done.result.documentId));

    await fails(inProject, 2, /give one of --text, --file, --url, --youtube/);
    await fails([...inProject, '--text', 'a', '--url', 'https://example.com'], 2, /give one of/);
    await fails([...base, '--text', 'a'], 2, /give --project proj_x, or --scope WORKSPACE/);
    await fails([...inProject, '--file', path.join(dir, 'notes.xyz')], 2, /give --mime-type/);
    await fails([...inProject, '--url', 'ftp://example.com/x'], 1, /knowledge\.create refused|url: must be an absolute http\(s\) URL/);
    await fails([...inProject, '--youtube', 'not a video'], 1, /must be a YouTube video id/);
    await fails([...base, '--project', 'proj_missing', '--text', 'a'], 1, /not_found/);
  });

  it('links an idea to a post and unlinks it (idea link)', async () => {
    const ws = await workspaceWithKey({ projects: 2 });
    const call = client(api.url, ws.key);
    const [post] = await ok(['post', 'create', '--workspace', ws.workspace.id, '--project', ws.project.id]);
    const [elsewhere] = await ok(['post', 'create', '--workspace', ws.workspace.id, '--project', ws.projects[1]!.id]);
    const idea = await ok(['idea', 'create', '--project', ws.project.id, '--title', 'Rollback guarantee']);
    assert.equal(idea.status, 'inbox');

    const linked = await ok(['idea', 'link', '--idea', idea.id, '--post', post.id]);
    assert.equal(linked.linkedPost.id, post.id);
    assert.equal(linked.status, 'in_production', 'an inbox idea moves to production when linked (spec 3.3)');
    const read = await call('GET', `/v1/ideas/${idea.id}`);
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.equal(read.body.data.linkedPost.id, post.id);

    // The operation's own rule: a post of another project cannot be linked.
    await fails(['idea', 'link', '--idea', idea.id, '--post', elsewhere.id], 1, /ideas\.update refused/);
    const unlinked = await ok(['idea', 'link', '--idea', idea.id, '--unlink']);
    assert.equal(unlinked.linkedPost, null);

    await fails(['idea', 'link', '--idea', idea.id], 2, /give --post post_x or --unlink/);
    await fails(['idea', 'link', '--idea', idea.id, '--post', post.id, '--unlink'], 2, /give --post post_x or --unlink/);
    await fails(['idea', 'link', '--idea', 'idea_missing', '--post', post.id], 1, /no idea idea_missing/);
  });
});
