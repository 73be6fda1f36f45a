import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { toolOutputSchema } from '../../api/mcp/tool';
import { TOOLS } from '../../api/mcp/tools/index';
import { issueApiKey } from '../../admin/provision';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { connectedPersonalProject } from '../support/network';
import { workspaceWithKey } from '../support/factories';
import { callTool, connect, fails, GENERATION_SOURCE, ok, TRANSPORTS, useMcpStack } from '../support/mcp';

// Each tool of spec 4.9 over both transports: its happy path and its errors, answered as
// isError with { code, message, requestId, documentationUrl } where code is the REST code.

const future = (minutes = 90) => new Date(Date.now() + minutes * 60_000).toISOString();

describe('MCP tools', function () {
  this.timeout(60_000);
  const stack = useMcpStack();

  for (const kind of TRANSPORTS) {
    describe(`over ${kind}`, () => {
      let ws: Awaited<ReturnType<typeof workspaceWithKey>>;
      let client: Client;
      /** A client whose key holds `scopes` only. */
      const narrow = async (scopes: string[]) =>
        connect(kind, stack.mcpUrl, (await issueApiKey({ workspaceId: ws.workspace.id, scopes })).key);

      beforeEach(async () => {
        ws = await workspaceWithKey({ projects: 2 });
        client = await connect(kind, stack.mcpUrl, ws.key);
      });
      afterEach(async () => {
        await client.close();
      });

      it('get_workspace, list_workspaces', async () => {
        const me = await ok(client, 'get_workspace');
        assert.equal(me.data.workspace.id, ws.workspace.id);
        assert.equal(me.data.workspace.plan, 'BUSINESS');
        assert.equal(me.data.principal.type, 'api_key');
        assert.equal(me.data.principal.id, ws.keyId);
        assert.ok(me.data.principal.scopes.includes('posts:write'));
        const list = await ok(client, 'list_workspaces');
        assert.deepEqual(list.data, [{ id: ws.workspace.id, name: ws.workspace.name, isDefault: true, reach: 'member', isActive: true }]);

        const postsOnly = await narrow(['posts:read']);
        assert.equal((await ok(postsOnly, 'get_workspace')).data.workspace.id, ws.workspace.id, 'get_workspace needs no scope');
        const refused = await fails(postsOnly, 'list_workspaces', {}, 'scope_missing');
        assert.equal(refused.details.required_scope, 'workspace:read');
        await postsOnly.close();
      });

      it('every tool lists an outputSchema from its output definition, which holds its answers and its error results (MCP 2025-06-18)', async () => {
        const { tools } = await client.listTools();
        assert.deepEqual(
          tools.map((t) => t.name),
          TOOLS.map((t) => t.name),
        );
        for (const listed of tools) {
          assert.equal(listed.outputSchema?.type, 'object', `${listed.name}: an object schema at the top level`);
          const tool = TOOLS.find((t) => t.name === listed.name)!;
          // The operation's own output, unless the tool adds a field (list_workspaces, list_post_statuses).
          if (tool.operation && !['list_workspaces', 'list_post_statuses'].includes(tool.name))
            assert.deepEqual(listed.outputSchema, toolOutputSchema(tool.operation.output), listed.name);
        }
        // The validator the SDK client applies to every call of these suites (test/mcp/support.ts
        // lists the tools on connect): a drifted answer fails it, an answer and an error pass.
        const validate = new AjvJsonSchemaValidator().getValidator(tools.find((t) => t.name === 'get_post')!.outputSchema!);
        const draft = await ok(client, 'create_post_draft', { projectId: ws.project.id, content: 'x' });
        const answer = await ok(client, 'get_post', { postId: draft.data.id });
        assert.equal(validate(answer).valid, true);
        assert.equal(validate({ data: { ...answer.data, surprise: 1 } }).valid, false);
        const refusal = await fails(client, 'get_post', { postId: 'post_missing' }, 'not_found');
        assert.equal(validate(refusal).valid, true);
      });

      it('list_projects, get_project', async () => {
        const list = await ok(client, 'list_projects', { limit: 1 });
        assert.equal(list.data.length, 1);
        assert.equal(list.pagination.has_more, true);
        const next = await ok(client, 'list_projects', { limit: 1, cursor: list.pagination.next_cursor });
        assert.equal(next.pagination.has_more, false);
        assert.deepEqual(new Set([list.data[0].id, next.data[0].id]), new Set(ws.projects.map((p) => p.id)));
        const one = await ok(client, 'get_project', { projectId: ws.project.id });
        assert.equal(one.data.id, ws.project.id);
        assert.equal(one.data.network.canPublish, true);

        const other = await workspaceWithKey();
        await fails(client, 'get_project', { projectId: other.project.id }, 'not_found');
        await fails(client, 'list_projects', { limit: 0 }, 'bad_pagination');
        await fails(client, 'list_projects', { cursor: 'forged' }, 'bad_cursor');
        await fails(client, 'get_project', {}, 'invalid_request');
        // spec 4.9: projects:read on the agent transport (REST accepts any token).
        const notesOnly = await narrow(['notes:read']);
        assert.equal((await fails(notesOnly, 'list_projects', {}, 'scope_missing')).details.required_scope, 'projects:read');
        await notesOnly.close();
      });

      it('create_note, list_notes, get_note', async () => {
        const note = { projectId: ws.project.id, content: 'An idea for Monday', clientId: 'agent-note-1' };
        const created = await ok(client, 'create_note', note);
        assert.match(created.data.id, /^note_/);
        assert.ok(created.data.slot.date);
        const again = await ok(client, 'create_note', note);
        assert.equal(again.data.id, created.data.id, 'clientId de-duplicates');
        const list = await ok(client, 'list_notes', { projectId: ws.project.id });
        assert.deepEqual(
          list.data.map((n: any) => n.id),
          [created.data.id],
        );
        assert.equal((await ok(client, 'get_note', { noteId: created.data.id })).data.content, 'An idea for Monday');

        await fails(client, 'get_note', { noteId: 'note_missing' }, 'not_found');
        await fails(client, 'create_note', { projectId: ws.project.id, content: '   ' }, 'unprocessable');
        await fails(client, 'create_note', { projectId: ws.project.id, content: 'x'.repeat(100_001) }, 'payload_too_large');
        // spec 4.9: an API key has no default project.
        await fails(client, 'create_note', { content: 'no project' }, 'invalid_request');
        await fails(client, 'list_notes', {}, 'invalid_request');
        const readOnly = await narrow(['read']);
        assert.equal(
          (await fails(readOnly, 'create_note', { projectId: ws.project.id, content: 'x' }, 'scope_missing')).details.required_scope,
          'notes:write',
        );
        await readOnly.close();
      });

      it('create_post_draft, list_posts, get_post, list_post_statuses', async () => {
        const draft = await ok(client, 'create_post_draft', {
          projectId: ws.project.id,
          content: 'First line\nSecond line',
          title: 'Launch',
        });
        assert.equal(draft.data.status, 'draft');
        assert.equal(draft.data.statusCategory, 'draft');
        const scheduled = await ok(client, 'create_post_draft', { projectId: ws.project.id, content: 'Later', scheduledFor: future() });
        assert.equal(scheduled.data.status, 'scheduled');
        const list = await ok(client, 'list_posts', { projectId: ws.project.id, status: 'draft' });
        assert.deepEqual(
          list.data.map((p: any) => p.id),
          [draft.data.id],
        );
        assert.equal((await ok(client, 'get_post', { postId: draft.data.id })).data.title, 'Launch');
        const statuses = await ok(client, 'list_post_statuses');
        assert.ok(statuses.data.some((s: any) => s.category === 'scheduled' && s.postCount === 1));
        // spec 4.9: the tool gives statusId (the id update_post takes), and keeps id.
        for (const s of statuses.data) assert.ok(s.statusId && s.statusId === s.id, JSON.stringify(s));
        const moved = await ok(client, 'update_post', {
          postId: draft.data.id,
          statusId: statuses.data.find((s: any) => s.category === 'draft').statusId,
        });
        assert.equal(moved.data.statusCategory, 'draft');

        await fails(client, 'create_post_draft', { projectId: ws.project.id, scheduledFor: '2020-01-01T00:00:00Z' }, 'unprocessable');
        await fails(client, 'create_post_draft', { projectId: ws.project.id, contentType: 'SHOUTING' }, 'unprocessable');
        await fails(client, 'create_post_draft', { projectId: ws.project.id, title: 't'.repeat(501) }, 'payload_too_large');
        await fails(client, 'create_post_draft', { projectId: ws.project.id, extra: 1 }, 'unprocessable');
        await fails(client, 'create_post_draft', { projectId: 'proj_missing' }, 'not_found');
        await fails(client, 'list_posts', { projectId: ws.project.id, status: 'lost' }, 'invalid_request');
        await fails(client, 'list_posts', { projectId: ws.project.id, limit: 'many' }, 'bad_pagination');
        await fails(client, 'get_post', { postId: 'post_missing' }, 'not_found');
        const other = await workspaceWithKey();
        await fails(client, 'list_posts', { projectId: other.project.id }, 'not_found');
      });

      it('create_post_draft honours idempotencyKey like Idempotency-Key', async () => {
        const args = { projectId: ws.project.id, content: 'Once only', idempotencyKey: `mcp-${kind}-1` };
        const postCount = () =>
          db()('posts')
            .where({ workspace_id: ws.workspace.id })
            .count({ n: '*' })
            .first()
            .then((r) => Number(r!.n));
        const first = await callTool(client, 'create_post_draft', args);
        const second = await callTool(client, 'create_post_draft', args);
        assert.equal((second.structuredContent as any).data.id, (first.structuredContent as any).data.id);
        assert.equal(first._meta?.idempotentReplayed, false);
        assert.equal(second._meta?.idempotentReplayed, true);
        assert.equal(await postCount(), 1);
        await fails(client, 'create_post_draft', { ...args, content: 'Something else' }, 'idempotency_key_conflict');
        await fails(client, 'create_post_draft', { ...args, idempotencyKey: 'not a key!' }, 'invalid_request');
        // A read tool has no idempotencyKey: an unknown argument of a read, invalid_request as on REST (spec 7.2).
        await fails(client, 'get_post', { postId: 'post_x', idempotencyKey: 'k' }, 'invalid_request');
        // spec 8: empty and over-long keys are refused like on REST, and nothing is written.
        for (const bad of ['', 'k'.repeat(65)]) {
          const refused = await fails(client, 'create_post_draft', { ...args, content: 'Never', idempotencyKey: bad }, 'invalid_request');
          assert.deepEqual(refused.details, { header: 'Idempotency-Key' });
        }
        assert.equal(await postCount(), 1);
      });

      it('update_post, schedule_post', async () => {
        const { project } = await connectedPersonalProject(ws.workspace.id);
        const post = await ok(client, 'create_post_draft', { projectId: project.id, content: 'Draft' });
        const updated = await ok(client, 'update_post', { postId: post.data.id, content: 'Edited', statusCategory: 'inProgress' });
        assert.equal(updated.data.content, 'Edited');
        assert.equal(updated.data.statusCategory, 'inProgress');
        const at = future(120);
        const scheduled = await ok(client, 'schedule_post', { postId: post.data.id, scheduledFor: at });
        assert.equal(scheduled.data.status, 'scheduled');
        assert.equal(scheduled.data.scheduledAt, at);
        const unscheduled = await ok(client, 'update_post', { postId: post.data.id, scheduledFor: null });
        assert.equal(unscheduled.data.status, 'draft');

        await fails(client, 'update_post', { postId: post.data.id, statusCategory: 'draft', statusId: 'pst_x' }, 'unprocessable');
        await fails(client, 'update_post', { postId: 'post_missing', content: 'x' }, 'not_found');
        await fails(client, 'schedule_post', { postId: post.data.id, scheduledFor: '2020-01-01T00:00:00Z' }, 'unprocessable');
        await fails(client, 'schedule_post', { postId: post.data.id }, 'unprocessable');
        await fails(client, 'schedule_post', { postId: post.data.id, scheduledFor: '2026-12-01' }, 'unprocessable');
        // spec 3.1: an unusable connection is 409 conflict and the post stays as it was.
        const disconnected = await workspaceWithKey({ connection: 'none' });
        const c2 = await connect(kind, stack.mcpUrl, disconnected.key);
        const p2 = await ok(c2, 'create_post_draft', { projectId: disconnected.project.id, content: 'No token' });
        const conflict = await fails(c2, 'schedule_post', { postId: p2.data.id, scheduledFor: future() }, 'conflict');
        assert.equal(conflict.details.retryable, false);
        assert.ok(conflict.details.reason);
        assert.ok(conflict.details.reconnectUrl);
        assert.equal((await ok(c2, 'get_post', { postId: p2.data.id })).data.status, 'draft');
        await c2.close();
      });

      it('generate_post, list_jobs, get_job, cancel_job', async () => {
        // No worker runs in this suite: the job stays QUEUED, which is what cancel needs.
        const queued = await ok(client, 'generate_post', { projectId: ws.project.id, source: GENERATION_SOURCE });
        assert.equal(queued.data.type, 'POST_GENERATION');
        assert.equal(queued.data.status, 'QUEUED');
        const jobs = await ok(client, 'list_jobs', { status: 'QUEUED' });
        assert.deepEqual(
          jobs.data.map((j: any) => j.id),
          [queued.data.id],
        );
        assert.equal((await ok(client, 'get_job', { jobId: queued.data.id })).data.status, 'QUEUED');
        const cancelled = await ok(client, 'cancel_job', { jobId: queued.data.id });
        assert.equal(cancelled.data.status, 'CANCELLED');
        assert.equal((await ok(client, 'cancel_job', { jobId: queued.data.id })).data.status, 'CANCELLED', 'cancelling twice is safe');

        await fails(client, 'generate_post', { projectId: ws.project.id }, 'invalid_request');
        await fails(
          client,
          'generate_post',
          { projectId: ws.project.id, source: { type: 'text', text: 'x'.repeat(100_001) } },
          'payload_too_large',
        );
        await fails(
          client,
          'generate_post',
          { projectId: ws.project.id, source: { type: 'note', noteId: 'note_missing' } },
          'unprocessable',
        );
        await fails(client, 'get_job', { jobId: 'job_missing' }, 'not_found');
        await fails(client, 'cancel_job', { jobId: 'job_missing' }, 'not_found');
        await fails(client, 'list_jobs', { status: 'LOST' }, 'invalid_request');

        // spec 4.9: jobs:read, jobs:cancel and posts:generate on the agent transport.
        const writer = await narrow(['posts:write']);
        assert.equal(
          (await fails(writer, 'generate_post', { projectId: ws.project.id, source: GENERATION_SOURCE }, 'scope_missing')).details
            .required_scope,
          'posts:generate',
        );
        assert.equal((await fails(writer, 'list_jobs', {}, 'scope_missing')).details.required_scope, 'jobs:read');
        assert.equal((await fails(writer, 'cancel_job', { jobId: queued.data.id }, 'scope_missing')).details.required_scope, 'jobs:cancel');
        await writer.close();
        // posts:generate stands instead of REST's posts:write for the tool (4.9 vs 4.1).
        const generator = await narrow(['posts:generate']);
        assert.equal((await ok(generator, 'generate_post', { projectId: ws.project.id, source: GENERATION_SOURCE })).data.status, 'QUEUED');
        await generator.close();
      });

      it('list_ideas, get_idea, create_idea, update_idea (planning additions, spec 9.3)', async () => {
        const created = (
          await ok(client, 'create_idea', { projectId: ws.project.id, title: 'Agent idea', pillar: 'Product', hook: 'Hook' })
        ).data;
        assert.match(created.id, /^idea_/);
        assert.equal(created.status, 'inbox');
        assert.deepEqual((await ok(client, 'get_idea', { ideaId: created.id })).data, created);
        const updated = (
          await ok(client, 'update_idea', { ideaId: created.id, projectId: ws.project.id, hook: null, status: 'in_production' })
        ).data;
        assert.equal(updated.hook, null);
        assert.equal(updated.pillar, 'Product');
        assert.equal(updated.status, 'in_production');
        const listed = await ok(client, 'list_ideas', { projectId: ws.project.id, status: 'in_production' });
        assert.deepEqual(
          listed.data.map((i: { id: string }) => i.id),
          [created.id],
        );
        await fails(client, 'update_idea', { ideaId: created.id, projectId: ws.project.id, status: 'done' }, 'unprocessable');
        // An API key has no default project (spec 4.9).
        assert.equal((await fails(client, 'list_ideas', {}, 'invalid_request')).details.field, 'projectId');
        const reader = await narrow(['read']);
        assert.equal((await fails(reader, 'get_idea', { ideaId: created.id }, 'scope_missing')).details.required_scope, 'ideas:write');
        await reader.close();
      });

      it('list_calendar, list_company_pages (spec 4.9; company pages a 9.3 addition)', async () => {
        const at = future(24 * 60);
        const post = (await ok(client, 'create_post_draft', { projectId: ws.project.id, content: 'On the calendar', scheduledFor: at }))
          .data;
        const cal = (await ok(client, 'list_calendar', { projectId: ws.project.id, from: at.slice(0, 10), to: at.slice(0, 10) })).data;
        assert.deepEqual(
          cal.entries.map((e: { type: string; id: string }) => [e.type, e.id]),
          [['post', post.id]],
        );
        assert.equal(cal.entries[0].at, new Date(at).toISOString());
        await fails(client, 'list_calendar', { projectId: ws.project.id, from: '2031-01-01', to: '2031-12-31' }, 'invalid_request');
        const pages = await ok(client, 'list_company_pages', {});
        assert.deepEqual(pages.data, []);
        assert.equal(pages.pagination.has_more, false);
        const notesOnly = await narrow(['notes:read']);
        assert.equal((await fails(notesOnly, 'list_calendar', {}, 'scope_missing')).details.required_scope, 'posts:read');
        await notesOnly.close();
      });

      it('get_analytics_overview, list_post_analytics, search_viral_posts, get_cross_workspace_analytics (spec 4.9)', async () => {
        const o = (await ok(client, 'get_analytics_overview', { projectId: ws.project.id, from: '2031-01-01', to: '2031-01-07' })).data;
        assert.equal(o.projectId, ws.project.id);
        assert.equal(o.daily.length, 7);
        assert.equal(o.totals.posts, 0);
        assert.equal(o.streak, null);
        const list = await ok(client, 'list_post_analytics', { projectId: ws.project.id, sort: 'impressions' });
        assert.deepEqual(list.data, []);
        const cross = (await ok(client, 'get_cross_workspace_analytics', {})).data;
        assert.deepEqual(
          cross.workspaces.map((w: { workspaceId: string }) => w.workspaceId),
          [ws.workspace.id],
        );
        await connectedPersonalProject(ws.workspace.id);
        const viral = await ok(client, 'search_viral_posts', { query: 'leadership', limit: 3 });
        assert.equal(viral.data.length, 3);
        assert.equal((await fails(client, 'get_analytics_overview', {}, 'invalid_request')).details.field, 'projectId');
        const postsOnly = await narrow(['posts:read']);
        assert.equal(
          (await fails(postsOnly, 'search_viral_posts', { query: 'ai' }, 'scope_missing')).details.required_scope,
          'analytics:read',
        );
        await postsOnly.close();
      });

      it('answers rate_limited past the workspace read budget', async () => {
        const previous = config.rateLimit.readPerWindow;
        config.rateLimit.readPerWindow = 3;
        try {
          for (let i = 0; i < 3; i++) await ok(client, 'get_post', { postId: 'post_x' }).catch(() => undefined);
          const limited = await fails(client, 'get_workspace', {}, 'rate_limited');
          assert.ok(limited.details.retryAfterSeconds >= 1);
        } finally {
          config.rateLimit.readPerWindow = previous;
        }
      });

      it('an unknown tool is a protocol error', async () => {
        await assert.rejects(callTool(client, 'get_analytics_forecast'), /Unknown tool/);
      });
    });
  }
});
