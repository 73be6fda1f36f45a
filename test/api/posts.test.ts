import assert from 'node:assert/strict';
import { createProject, type ConnectionPreset } from '../../admin/provision';
import { db } from '../../lib/db';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';
import { connectedPersonalProject } from '../support/network';

// spec 4.4 / 3.1: creating and editing posts. Scheduling through PATCH on a *connected*
// project performs a live network verification, so those cases live with the publishing
// suites; here PATCH scheduling is exercised only where it must be refused without a call.

const DAY = 86_400_000;
const future = (days = 30) => new Date(Date.now() + days * DAY).toISOString();

async function outboxTypes(postId: string): Promise<string[]> {
  return db()('outbox_events').whereRaw("data->'post'->>'id' = ?", [postId]).orderBy('seq').pluck('type');
}

async function slotOf(postId: string) {
  return db()('calendar_slots').where({ post_id: postId }).first();
}

describe('posts (spec 4.4)', function () {
  this.timeout(30_000);
  const api = useApi();

  describe('POST /v1/posts', () => {
    it('creates a draft with the documented defaults', async () => {
      const { key, project } = await workspaceWithKey();
      const res = await client(api.url, key)('POST', '/v1/posts', { body: { projectId: project.id } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const p = res.body.data;
      assert.match(p.id, /^post_/);
      assert.equal(p.projectId, project.id);
      assert.equal(p.status, 'draft');
      assert.equal(p.statusCategory, 'draft');
      assert.equal(p.content, ' ');
      assert.equal(p.title, '');
      assert.equal(p.contentType, 'PERSONAL');
      assert.equal(p.scheduledAt, null);
      assert.equal(p.updatedAt, null, 'never edited');
      assert.equal(typeof p.platform, 'string');
      assert.equal(p.delivery.state, 'not_scheduled');
      assert.equal(p.review.state, 'not_requested');
      assert.equal(p.media.kind, 'images');
      assert.equal(await slotOf(p.id), undefined, 'a draft has no calendar slot');

      const got = await client(api.url, key)('GET', `/v1/posts/${p.id}`);
      assert.equal(got.status, 200);
      assert.deepEqual(
        Object.keys(got.body.data).sort(),
        ['content', 'contentType', 'createdAt', 'id', 'platform', 'projectId', 'scheduledAt', 'status', 'title', 'updatedAt'],
        'reads return the R subset',
      );
    });

    it('enforces 100,000 characters of content and 500 of title with 413 payload_too_large', async () => {
      const { key, project } = await workspaceWithKey();
      const call = client(api.url, key);
      assertError(
        await call('POST', '/v1/posts', { body: { projectId: project.id, content: 'x'.repeat(100_001) } }),
        413,
        'payload_too_large',
      );
      assertError(await call('POST', '/v1/posts', { body: { projectId: project.id, title: 't'.repeat(501) } }), 413, 'payload_too_large');
      const atLimit = await call('POST', '/v1/posts', {
        body: { projectId: project.id, content: 'x'.repeat(100_000), title: 't'.repeat(500) },
      });
      assert.equal(atLimit.status, 200, JSON.stringify(atLimit.body).slice(0, 300));
      assert.equal(atLimit.body.data.content.length, 100_000);
    });

    it('answers a past or malformed scheduledFor and a bad contentType with 422 unprocessable', async () => {
      const { key, project } = await workspaceWithKey();
      const call = client(api.url, key);
      const bad = [
        { scheduledFor: new Date(Date.now() - 60_000).toISOString() },
        { scheduledFor: '2099-01-01' }, // a bare date
        { scheduledFor: 'next tuesday' },
        { scheduledFor: '2099-02-30T09:00:00Z' }, // no such day
        { scheduledFor: '2099-01-01T25:00:00Z' },
        { contentType: 'NEWS' }, // a read-only value, not writable
        { contentType: 'personal' },
        { content: 42 },
      ];
      for (const extra of bad) {
        assertError(await call('POST', '/v1/posts', { body: { projectId: project.id, ...extra } }), 422, 'unprocessable');
      }
      const list = await call('GET', `/v1/posts?projectId=${project.id}`);
      assert.equal(list.body.data.length, 0, 'nothing was created');
    });

    it('schedules a post with a future scheduledFor and creates its calendar slot', async () => {
      const { key, project } = await workspaceWithKey();
      const when = future(10);
      const res = await client(api.url, key)('POST', '/v1/posts', {
        body: { projectId: project.id, content: 'Soon', scheduledFor: when, contentType: 'EDUCATIONAL' },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.status, 'scheduled');
      assert.equal(res.body.data.statusCategory, 'scheduled');
      assert.equal(res.body.data.scheduledAt, when);
      const slot = await slotOf(res.body.data.id);
      assert.ok(slot, 'a slot row exists');
      assert.equal(slot.date.toISOString(), when);
      assert.equal(slot.project_id, project.id);
      assert.equal(slot.content_type, 'EDUCATIONAL');
      assert.deepEqual(await outboxTypes(res.body.data.id), ['post.created', 'post.scheduled']);
    });

    it('does not check the network token at create time', async () => {
      const { key, workspace } = await workspaceWithKey();
      const dead = await createProject({ workspaceId: workspace.id, type: 'PERSONAL_BRAND', name: 'Dead token', connection: 'revoked' });
      const res = await client(api.url, key)('POST', '/v1/posts', { body: { projectId: dead.id, scheduledFor: future(3) } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.status, 'scheduled');
    });

    it('reads an offset-less scheduledFor in the project timezone, across DST', async () => {
      const { key, workspace } = await workspaceWithKey();
      const ny = await createProject({
        workspaceId: workspace.id,
        type: 'PERSONAL_BRAND',
        name: 'New Yorker',
        timezone: 'America/New_York',
      });
      const call = client(api.url, key);
      const year = new Date().getUTCFullYear() + 2;
      const cases: Array<[string, string]> = [
        [`${year}-01-15T09:00:00`, `${year}-01-15T14:00:00.000Z`], // EST, UTC-5
        [`${year}-07-15T09:00:00`, `${year}-07-15T13:00:00.000Z`], // EDT, UTC-4
        [`${year}-07-15T09:00`, `${year}-07-15T13:00:00.000Z`],
        [`${year}-07-15T09:00:00+02:00`, `${year}-07-15T07:00:00.000Z`], // an explicit offset wins
        [`${year}-07-15T09:00:00Z`, `${year}-07-15T09:00:00.000Z`],
      ];
      for (const [input, utc] of cases) {
        const res = await call('POST', '/v1/posts', { body: { projectId: ny.id, scheduledFor: input } });
        assert.equal(res.status, 200, `${input}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.data.scheduledAt, utc, input);
        assert.equal((await slotOf(res.body.data.id)).date.toISOString(), utc);
      }
    });
  });

  describe('PATCH /v1/posts/{postId}', () => {
    it('names an untitled post from the opening line of new content', async () => {
      const { key, project } = await workspaceWithKey();
      const call = client(api.url, key);
      const id = (await call('POST', '/v1/posts', { body: { projectId: project.id } })).body.data.id;
      const res = await call('PATCH', `/v1/posts/${id}`, { body: { content: '\n   \nLaunch day is here!\nMore below.' } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.title, 'Launch day is here!');
      assert.equal(res.body.data.content, '\n   \nLaunch day is here!\nMore below.');
      assert.equal(typeof res.body.data.updatedAt, 'string');
      // The full field set on the update response.
      for (const f of ['statusCategory', 'statusId', 'statusTitle', 'contentTruncated', 'delivery', 'review', 'media', 'funnelStage']) {
        assert.ok(f in res.body.data, `missing ${f}`);
      }
    });

    it('keeps a title the caller set when content changes', async () => {
      const { key, project } = await workspaceWithKey();
      const call = client(api.url, key);
      const id = (await call('POST', '/v1/posts', { body: { projectId: project.id, title: 'My name', content: 'Body' } })).body.data.id;
      const res = await call('PATCH', `/v1/posts/${id}`, { body: { content: 'Totally new opening\nline two' } });
      assert.equal(res.body.data.title, 'My name');
      const set = await call('PATCH', `/v1/posts/${id}`, { body: { title: 'Renamed' } });
      assert.equal(set.body.data.title, 'Renamed');
      const again = await call('PATCH', `/v1/posts/${id}`, { body: { content: 'Another opening' } });
      assert.equal(again.body.data.title, 'Renamed');
    });

    it('derives the name from new content sent together with an empty title', async () => {
      const { key, project } = await workspaceWithKey();
      const call = client(api.url, key);
      const id = (await call('POST', '/v1/posts', { body: { projectId: project.id, title: 'Manual', content: 'Old opening' } })).body.data
        .id;
      const res = await call('PATCH', `/v1/posts/${id}`, { body: { title: '', content: 'Fresh opening line\nbody' } });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.title, 'Fresh opening line');
    });

    it('clears the name on an empty title, so the next content edit names the post again', async () => {
      const { key, project } = await workspaceWithKey();
      const call = client(api.url, key);
      const id = (await call('POST', '/v1/posts', { body: { projectId: project.id, title: 'Manual', content: 'Old opening\nbody' } })).body
        .data.id;
      const cleared = await call('PATCH', `/v1/posts/${id}`, { body: { title: '' } });
      assert.equal(cleared.status, 200);
      // spec 4.4: "send an empty string to clear the name so the service may name it again".
      assert.equal(cleared.body.data.title, '', 'the name is cleared');
      const renamed = await call('PATCH', `/v1/posts/${id}`, { body: { content: 'New opening line\nbody' } });
      assert.equal(renamed.body.data.title, 'New opening line', 'named again from the new opening line');
    });

    it('moves to the default status of a statusCategory, or to a listed statusId', async () => {
      const { key, project, workspace } = await workspaceWithKey();
      const call = client(api.url, key);
      const id = (await call('POST', '/v1/posts', { body: { projectId: project.id } })).body.data.id;
      const defaults: Record<string, string> = Object.fromEntries(
        (await db()('post_statuses').where({ workspace_id: workspace.id, is_default: true }).select('category', 'id')).map((r) => [
          r.category,
          r.id,
        ]),
      );
      const inProgress = await call('PATCH', `/v1/posts/${id}`, { body: { statusCategory: 'inProgress' } });
      assert.equal(inProgress.status, 200, JSON.stringify(inProgress.body));
      assert.equal(inProgress.body.data.statusCategory, 'inProgress');
      assert.equal(inProgress.body.data.statusId, defaults.inProgress);
      const review = await call('PATCH', `/v1/posts/${id}`, { body: { statusCategory: 'review' } });
      assert.equal(review.body.data.statusId, defaults.review);
      // spec 3.1 / issue 29 item 1: the board status is a label; the legacy status is the lifecycle's.
      assert.equal(review.body.data.status, 'draft');

      const statuses = await call('GET', '/v1/post-statuses');
      assert.equal(statuses.status, 200);
      const draft = statuses.body.data.find((s: { category: string }) => s.category === 'draft');
      assert.ok(draft, 'a draft status is listed');
      const byId = await call('PATCH', `/v1/posts/${id}`, { body: { statusId: draft.id } });
      assert.equal(byId.status, 200);
      assert.equal(byId.body.data.statusId, draft.id);
      assert.equal(byId.body.data.statusCategory, 'draft');
      assert.equal(byId.body.data.status, 'draft');
    });

    it('refuses statusCategory with statusId, and unknown ones, with 422', async () => {
      const { key, project } = await workspaceWithKey();
      const other = await workspaceWithKey();
      const call = client(api.url, key);
      const id = (await call('POST', '/v1/posts', { body: { projectId: project.id } })).body.data.id;
      const statuses = (await call('GET', '/v1/post-statuses')).body.data;
      const foreign = (await client(api.url, other.key)('GET', '/v1/post-statuses')).body.data[0].id;
      assertError(
        await call('PATCH', `/v1/posts/${id}`, { body: { statusCategory: 'draft', statusId: statuses[0].id } }),
        422,
        'unprocessable',
      );
      assertError(await call('PATCH', `/v1/posts/${id}`, { body: { statusCategory: 'archived' } }), 422, 'unprocessable');
      assertError(await call('PATCH', `/v1/posts/${id}`, { body: { statusId: foreign } }), 422, 'unprocessable');
      const after = await call('PATCH', `/v1/posts/${id}`, { body: {} });
      assert.equal(after.body.data.statusCategory, 'draft');
    });

    it('enforces the size limits and the scheduledFor shape with 413 and 422', async () => {
      const { key, project } = await workspaceWithKey();
      const call = client(api.url, key);
      const id = (await call('POST', '/v1/posts', { body: { projectId: project.id } })).body.data.id;
      assertError(await call('PATCH', `/v1/posts/${id}`, { body: { content: 'x'.repeat(100_001) } }), 413, 'payload_too_large');
      assertError(await call('PATCH', `/v1/posts/${id}`, { body: { title: 't'.repeat(501) } }), 413, 'payload_too_large');
      assertError(await call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: '2099-01-01' } }), 422, 'unprocessable');
      assertError(
        await call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: new Date(Date.now() - DAY).toISOString() } }),
        422,
        'unprocessable',
      );
      assertError(await call('PATCH', `/v1/posts/${id}`, { body: { contentType: 'BUSINESS' } }), 422, 'unprocessable');
      assertError(await call('PATCH', `/v1/posts/post_${'0'.repeat(24)}`, { body: { content: 'x' } }), 404, 'not_found');
    });

    it('unschedules with scheduledFor null: back to draft, slot cleared, events written', async () => {
      const { key, project } = await workspaceWithKey();
      const call = client(api.url, key);
      const created = await call('POST', '/v1/posts', { body: { projectId: project.id, scheduledFor: future(5) } });
      const id = created.body.data.id;
      assert.ok(await slotOf(id));
      const res = await call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: null } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.status, 'draft');
      assert.equal(res.body.data.statusCategory, 'draft');
      assert.equal(res.body.data.scheduledAt, null);
      assert.equal(res.body.data.delivery.state, 'not_scheduled');
      assert.equal(await slotOf(id), undefined, 'the slot is gone');
      assert.deepEqual(await outboxTypes(id), ['post.created', 'post.scheduled', 'post.updated', 'post.unscheduled']);
    });

    it('writes post.updated for an edit, and leaves the schedule alone when scheduledFor is omitted', async () => {
      const { key, project } = await workspaceWithKey();
      const call = client(api.url, key);
      const when = future(7);
      const id = (await call('POST', '/v1/posts', { body: { projectId: project.id, scheduledFor: when } })).body.data.id;
      const res = await call('PATCH', `/v1/posts/${id}`, { body: { content: 'Edited', autoLike: true } });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.status, 'scheduled');
      assert.equal(res.body.data.scheduledAt, when);
      assert.equal(res.body.data.autoLike, true);
      assert.equal((await slotOf(id)).date.toISOString(), when);
      const events = await db()('outbox_events')
        .whereRaw("data->'post'->>'id' = ?", [id])
        .orderBy('seq')
        .select('type', 'workspace_id', 'project_id', 'data');
      assert.deepEqual(
        events.map((e) => e.type),
        ['post.created', 'post.scheduled', 'post.updated'],
      );
      const updated = events[2]!;
      assert.equal(updated.project_id, project.id);
      assert.equal(updated.data.post.content, 'Edited');
    });

    // spec 3.1 / issue 29 item 1 / docs/publishing.md "Board status and lifecycle": a board move
    // (statusCategory, statusId) is the workspace's label, moved freely for every category on
    // any post; only scheduledFor moves the lifecycle (status, scheduledAt, delivery, slot).
    describe('board moves are labels; only scheduledFor moves the schedule', () => {
      /** The lifecycle of one post as the API and the database read it. */
      async function lifecycleOf(id: string, call: ReturnType<typeof client>) {
        const r = (await call('GET', `/v1/posts/${id}`)).body.data;
        const row = await db()('posts').where({ id }).first('status', 'scheduled_at', 'schedule_version', 'delivery');
        const slot = await slotOf(id);
        return {
          status: r.status,
          scheduledAt: r.scheduledAt,
          dbStatus: row.status,
          version: row.schedule_version,
          delivery: row.delivery?.state ?? null,
          slot: slot ? slot.date.toISOString() : null,
        };
      }
      /** A lifecycle at rest: the API and the row agree on the status, the slot on the time. */
      const settled = (status: string, scheduledAt: string | null, version: number, delivery: string) => ({
        status,
        scheduledAt,
        dbStatus: status,
        version,
        delivery,
        slot: scheduledAt,
      });
      async function defaults(workspaceId: string): Promise<Record<string, string>> {
        const rows = await db()('post_statuses').where({ workspace_id: workspaceId, is_default: true }).select('category', 'id');
        return Object.fromEntries(rows.map((r) => [r.category, r.id]));
      }
      const CATEGORIES = ['suggested', 'draft', 'inProgress', 'review', 'scheduled', 'published'] as const;

      it('a draft moves to every category, by statusCategory or statusId: 200, post.updated, lifecycle untouched', async () => {
        const { key, project, workspace } = await workspaceWithKey();
        const call = client(api.url, key);
        const ids = await defaults(workspace.id);
        const id = (await call('POST', '/v1/posts', { body: { projectId: project.id } })).body.data.id;
        const before = await lifecycleOf(id, call);
        assert.deepEqual(before, settled('draft', null, 0, 'not_scheduled'));
        const expected = ['post.created'];
        for (const category of CATEGORIES) {
          for (const body of [{ statusCategory: category }, { statusId: ids[category] }]) {
            const res = await call('PATCH', `/v1/posts/${id}`, { body });
            assert.equal(res.status, 200, `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
            assert.equal(res.body.data.statusCategory, category);
            assert.equal(res.body.data.statusId, ids[category]);
            assert.deepEqual(await lifecycleOf(id, call), before, `${JSON.stringify(body)} leaves the lifecycle alone`);
            expected.push('post.updated');
          }
        }
        assert.deepEqual(await outboxTypes(id), expected, 'post.updated only: never scheduled, unscheduled or published');
      });

      it('a scheduled post moved to another category stays on the schedule: same time, slot and version', async () => {
        const { key, project, workspace } = await workspaceWithKey();
        const call = client(api.url, key);
        const ids = await defaults(workspace.id);
        const when = future(6);
        const id = (await call('POST', '/v1/posts', { body: { projectId: project.id, scheduledFor: when } })).body.data.id;
        const before = await lifecycleOf(id, call);
        assert.deepEqual(before, settled('scheduled', when, 1, 'scheduled'));
        for (const category of ['draft', 'review', 'inProgress', 'suggested', 'published', 'scheduled'] as const) {
          const res = await call('PATCH', `/v1/posts/${id}`, { body: { statusCategory: category } });
          assert.equal(res.status, 200, JSON.stringify(res.body));
          assert.equal(res.body.data.statusId, ids[category]);
          assert.deepEqual(await lifecycleOf(id, call), before, `${category} is a label`);
        }
        assert.deepEqual(await outboxTypes(id), ['post.created', 'post.scheduled', ...Array(6).fill('post.updated')]);
      });

      it('a published post moves between any categories and stays published; scheduledFor stays 422 already_published', async () => {
        const { key, project, workspace } = await workspaceWithKey();
        const call = client(api.url, key);
        const ids = await defaults(workspace.id);
        const id = (await call('POST', '/v1/posts', { body: { projectId: project.id, scheduledFor: future(1) } })).body.data.id;
        await db()('posts')
          .where({ id })
          .update({ status: 'published', status_id: ids.published, published_at: new Date(), network_post_urn: 'urn:li:share:1' });
        const before = await lifecycleOf(id, call);
        for (const category of ['draft', 'review', 'published'] as const) {
          const res = await call('PATCH', `/v1/posts/${id}`, { body: { statusCategory: category } });
          assert.equal(res.status, 200, JSON.stringify(res.body));
          assert.equal(res.body.data.statusCategory, category);
          assert.equal(res.body.data.status, 'published');
          assert.deepEqual(await lifecycleOf(id, call), before);
        }
        const events = await outboxTypes(id);
        const shown = (await call('GET', `/v1/posts/${id}`)).body.data;
        for (const scheduledFor of [null, future(2)]) {
          assert.equal(
            assertError(await call('PATCH', `/v1/posts/${id}`, { body: { statusCategory: 'draft', scheduledFor } }), 422, 'unprocessable')
              .details?.reason,
            'already_published',
          );
        }
        assert.deepEqual((await call('GET', `/v1/posts/${id}`)).body.data, shown, 'a refused request changes nothing');
        assert.deepEqual(await outboxTypes(id), events);
      });

      it('statusCategory scheduled with a future scheduledFor goes through the verified scheduling path', async () => {
        const { key, workspace } = await workspaceWithKey({ projects: 0 });
        const call = client(api.url, key);
        const { project } = await connectedPersonalProject(workspace.id);
        const id = (await call('POST', '/v1/posts', { body: { projectId: project.id, content: 'Soon' } })).body.data.id;
        const when = future(3);
        const res = await call('PATCH', `/v1/posts/${id}`, { body: { statusCategory: 'scheduled', scheduledFor: when } });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.data.status, 'scheduled');
        assert.equal(res.body.data.statusCategory, 'scheduled');
        assert.equal(res.body.data.scheduledAt, when);
        assert.equal(res.body.data.delivery.state, 'scheduled');
        assert.equal((await slotOf(id))?.date.toISOString(), when);
        assert.deepEqual(await outboxTypes(id), ['post.created', 'post.updated', 'post.scheduled']);
        assert.ok(
          (
            await db()('network_connections')
              .where({ id: (await db()('projects').where({ id: project.id }).first()).connection_id })
              .first()
          ).last_validated_at,
          'verified live',
        );
      });

      it('statusCategory scheduled with a future scheduledFor on a connection that cannot publish is the scheduling 409', async () => {
        const { key, workspace } = await workspaceWithKey({ projects: 0 });
        const call = client(api.url, key);
        const project = await createProject({
          workspaceId: workspace.id,
          type: 'PERSONAL_BRAND',
          name: 'No token',
          connection: 'disconnected',
        });
        const id = (await call('POST', '/v1/posts', { body: { projectId: project.id } })).body.data.id;
        const before = (await call('GET', `/v1/posts/${id}`)).body.data;
        const err = assertError(
          await call('PATCH', `/v1/posts/${id}`, { body: { statusCategory: 'scheduled', scheduledFor: future(2) } }),
          409,
          'conflict',
        );
        assert.equal(err.details?.reason, 'no_token');
        assert.deepEqual((await call('GET', `/v1/posts/${id}`)).body.data, before, 'the board did not move either');
        assert.deepEqual(await outboxTypes(id), ['post.created']);
      });

      it('scheduledFor null with a category unschedules, and the post ends in the category the request named', async () => {
        const { key, project, workspace } = await workspaceWithKey();
        const call = client(api.url, key);
        const ids = await defaults(workspace.id);
        const id = (await call('POST', '/v1/posts', { body: { projectId: project.id, scheduledFor: future(4) } })).body.data.id;
        const res = await call('PATCH', `/v1/posts/${id}`, { body: { statusCategory: 'inProgress', scheduledFor: null } });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.data.statusId, ids.inProgress);
        assert.deepEqual(await lifecycleOf(id, call), settled('draft', null, 2, 'not_scheduled'));
        assert.deepEqual(await outboxTypes(id), ['post.created', 'post.scheduled', 'post.updated', 'post.unscheduled']);
      });
    });

    describe('on a project whose connection cannot publish', () => {
      const cases: Array<{ label: string; type: 'PERSONAL_BRAND' | 'COMPANY_PAGE'; connection: ConnectionPreset; reason: string }> = [
        { label: 'disconnected (no token)', type: 'PERSONAL_BRAND', connection: 'disconnected', reason: 'no_token' },
        { label: 'revoked', type: 'PERSONAL_BRAND', connection: 'revoked', reason: 'revoked' },
        { label: 'a company page never linked', type: 'COMPANY_PAGE', connection: 'none', reason: 'not_linked' },
      ];
      for (const c of cases) {
        it(`answers 409 conflict and leaves the post unchanged: ${c.label}`, async () => {
          const { key, workspace } = await workspaceWithKey();
          const project = await createProject({
            workspaceId: workspace.id,
            type: c.type,
            name: `P ${c.connection}`,
            connection: c.connection,
          });
          const call = client(api.url, key);
          const before = (await call('POST', '/v1/posts', { body: { projectId: project.id, content: 'Original' } })).body.data;
          const res = await call('PATCH', `/v1/posts/${before.id}`, {
            body: { scheduledFor: future(2), content: 'Changed', title: 'Changed' },
          });
          const err = assertError(res, 409, 'conflict');
          assert.equal(err.details?.reason, c.reason);
          assert.equal(err.details?.retryable, false);
          assert.equal(typeof err.details?.reconnectUrl, 'string');
          assert.ok(err.details?.reconnectUrl.includes(project.id), err.details?.reconnectUrl);
          assert.doesNotThrow(() => new URL(err.details?.reconnectUrl));

          const after = await call('GET', `/v1/posts/${before.id}`);
          assert.deepEqual(after.body.data, pickSummary(before));
          assert.equal(await slotOf(before.id), undefined);
          assert.deepEqual(await outboxTypes(before.id), ['post.created'], 'no event for a refused change');

          // Unscheduling needs no connection and is not refused.
          assert.equal((await call('PATCH', `/v1/posts/${before.id}`, { body: { scheduledFor: null } })).status, 200);
        });
      }
    });
  });
});

function pickSummary(p: Record<string, unknown>) {
  const keys = ['content', 'contentType', 'createdAt', 'id', 'platform', 'projectId', 'scheduledAt', 'status', 'title', 'updatedAt'];
  return Object.fromEntries(keys.map((k) => [k, p[k]]));
}
