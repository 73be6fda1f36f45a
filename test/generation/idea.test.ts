import assert from 'node:assert/strict';
import { contentTypeForPillar } from '../../lib/ideas/ideas';
import { createProject } from '../../admin/provision';
import { client } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { useHarness, waitForJob } from './support';

// spec 4.4 generation from an idea, end to end (real Temporal, in-process worker, LLM stub):
// the brief is what the writer gets, contentType defaults from the pillar, the draft links to
// the idea and the idea moves to in_production (docs/ideas.md).

describe('post generation from an idea (spec 4.4)', function () {
  this.timeout(90_000);
  const h = useHarness();

  it('maps pillars to content types as documented', () => {
    assert.equal(contentTypeForPillar('Education'), 'EDUCATIONAL');
    assert.equal(contentTypeForPillar('  HOW-TO guides '), 'EDUCATIONAL');
    assert.equal(contentTypeForPillar('Company culture'), 'BUSINESS_INTERNAL');
    assert.equal(contentTypeForPillar('Product launches'), 'BUSINESS_EXTERNAL');
    assert.equal(contentTypeForPillar('Founder journey'), 'PERSONAL');
    assert.equal(contentTypeForPillar('Memes'), null, 'no keyword: the project default applies');
    assert.equal(contentTypeForPillar(null), null);
    assert.equal(contentTypeForPillar(''), null);
  });

  it('writes a draft from the brief, typed by the pillar, linked to the idea, which moves to in_production', async () => {
    const ws = await workspaceWithKey();
    const call = client(h.api.url, ws.key);
    const idea = (
      await call('POST', '/v1/ideas', {
        body: {
          projectId: ws.project.id,
          title: 'Rollbacks halved',
          pillar: 'Education',
          hook: 'Twelve checks, zero surprises.',
          topic: 'release checklists',
          content: 'We moved our release checklist into the pipeline this quarter and rollbacks dropped by half.',
        },
      })
    ).body.data;
    assert.equal(idea.status, 'inbox');
    const created = await call('POST', '/v1/posts/generations', {
      body: { projectId: ws.project.id, source: { type: 'idea', ideaId: idea.id } },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const job = await waitForJob(created.body.data.id);
    assert.equal(job.status, 'DONE', JSON.stringify(job));
    assert.deepEqual(job.input.source, { type: 'idea', ideaId: idea.id });
    const postId = job.result.postId as string;

    const post = (await call('GET', `/v1/posts/${postId}`)).body.data;
    assert.equal(post.status, 'draft');
    assert.equal(post.contentType, 'EDUCATIONAL', 'the pillar decides when options.contentType is omitted');
    const prompt = JSON.stringify(h.stub.requests.map((r) => r.body));
    for (const part of ['Twelve checks, zero surprises.', 'release checklists', 'Rollbacks halved', 'rollbacks dropped by half'])
      assert.ok(prompt.includes(part), `the writer got ${part}`);

    const after = (await call('GET', `/v1/ideas/${idea.id}`)).body.data;
    assert.equal(after.status, 'in_production');
    assert.deepEqual(after.linkedPost, { id: postId, statusCategory: 'draft' });
  });

  it('options.contentType wins over the pillar; an idea without a pillar writes PERSONAL', async () => {
    const ws = await workspaceWithKey();
    const call = client(h.api.url, ws.key);
    const product = (await call('POST', '/v1/ideas', { body: { projectId: ws.project.id, title: 'Launch day', pillar: 'Product' } })).body
      .data;
    const bare = (await call('POST', '/v1/ideas', { body: { projectId: ws.project.id, title: 'A thought', status: 'in_production' } })).body
      .data;
    const jobA = (
      await call('POST', '/v1/posts/generations', {
        body: { projectId: ws.project.id, source: { type: 'idea', ideaId: product.id }, options: { contentType: 'PERSONAL' } },
      })
    ).body.data;
    const jobB = (
      await call('POST', '/v1/posts/generations', { body: { projectId: ws.project.id, source: { type: 'idea', ideaId: bare.id } } })
    ).body.data;
    const [a, b] = [await waitForJob(jobA.id), await waitForJob(jobB.id)];
    assert.equal((await call('GET', `/v1/posts/${a.result.postId}`)).body.data.contentType, 'PERSONAL');
    assert.equal((await call('GET', `/v1/posts/${b.result.postId}`)).body.data.contentType, 'PERSONAL');
    // Product pillar without an override would have been BUSINESS_EXTERNAL.
    const jobC = (
      await call('POST', '/v1/posts/generations', { body: { projectId: ws.project.id, source: { type: 'idea', ideaId: product.id } } })
    ).body.data;
    const c = await waitForJob(jobC.id);
    assert.equal((await call('GET', `/v1/posts/${c.result.postId}`)).body.data.contentType, 'BUSINESS_EXTERNAL');
    // A second generation re-links the idea to the newest draft.
    assert.equal((await call('GET', `/v1/ideas/${product.id}`)).body.data.linkedPost.id, c.result.postId);
  });

  it("a company page's idea without a matching pillar keeps the page default, BUSINESS_EXTERNAL", async () => {
    const ws = await workspaceWithKey();
    const page = await createProject({
      workspaceId: ws.workspace.id,
      type: 'COMPANY_PAGE',
      name: 'Acme page',
      linkedProjectId: ws.project.id,
    });
    const call = client(h.api.url, ws.key);
    const idea = (await call('POST', '/v1/ideas', { body: { projectId: page.id, title: 'Our week', pillar: 'Memes' } })).body.data;
    const job = (await call('POST', '/v1/posts/generations', { body: { projectId: page.id, source: { type: 'idea', ideaId: idea.id } } }))
      .body.data;
    const done = await waitForJob(job.id);
    assert.equal(done.status, 'DONE', JSON.stringify(done));
    assert.equal((await call('GET', `/v1/posts/${done.result.postId}`)).body.data.contentType, 'BUSINESS_EXTERNAL');
  });
});
