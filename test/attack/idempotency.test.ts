import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { connect, startMcpStack, type McpStack } from '../support/mcp';
import { client, startApi, type CallResult, type TestServer } from '../support/app';
import { uniqueKey, workspaceWithKey } from '../support/factories';
import { assertError, startApiProcess, type ApiProcess } from '../support/foundation';

// spec 8 Idempotency under contention: 100 concurrent requests with one key, spread over two
// API processes (the claim is a Postgres row, not process memory): one body → one execution
// and 99 replays of its answer; 100 bodies → one execution and 99 idempotency_key_conflict.
// A key that is sent is 1 to 64 characters: an empty or longer one is refused on both doors.

const N = 100;
const RAISED = { readPerWindow: 1_000_000, writePerWindow: 1_000_000 };

async function rows(projectId: string): Promise<{ posts: number; events: number }> {
  const [{ n: posts }] = await db()('posts').where({ project_id: projectId }).count({ n: '*' });
  const [{ n: events }] = await db()('outbox_events').where({ project_id: projectId, type: 'post.created' }).count({ n: '*' });
  return { posts: Number(posts), events: Number(events) };
}

describe('Idempotency-Key under contention (spec 8)', function () {
  this.timeout(180_000);
  let here: TestServer;
  let other: ApiProcess;
  const previousLimits = { ...config.rateLimit };
  before(async () => {
    Object.assign(config.rateLimit, RAISED);
    here = await startApi();
    other = await startApiProcess({ RATE_LIMIT_READ: '1000000', RATE_LIMIT_WRITE: '1000000' });
  });
  after(async () => {
    Object.assign(config.rateLimit, previousLimits);
    await here?.close();
    await other?.close();
  });

  /** N requests at once, alternating between this process and the other one. */
  function storm(key: string, apiKey: string, body: (i: number) => unknown): Promise<CallResult[]> {
    const doors = [client(here.url, apiKey), client(other.url, apiKey)];
    return Promise.all(
      Array.from({ length: N }, (_, i) => doors[i % 2]!('POST', '/v1/posts', { body: body(i), headers: { 'Idempotency-Key': key } })),
    );
  }

  it(`runs ${N} concurrent identical requests on two processes once; the rest replay its answer`, async () => {
    const { key, project } = await workspaceWithKey();
    const results = await storm(uniqueKey(), key, () => ({ projectId: project.id, content: 'Exactly once' }));
    for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(new Set(results.map((r) => r.body.data.id)).size, 1, 'every answer names the same post');
    assert.equal(results.filter((r) => r.headers.get('idempotent-replayed') === 'false').length, 1);
    assert.equal(results.filter((r) => r.headers.get('idempotent-replayed') === 'true').length, N - 1);
    assert.deepEqual(await rows(project.id), { posts: 1, events: 1 });
  });

  it(`runs one of ${N} concurrent different bodies under one key; the rest are 409 idempotency_key_conflict`, async () => {
    const { key, project } = await workspaceWithKey();
    const results = await storm(uniqueKey(), key, (i) => ({ projectId: project.id, content: `Body ${i}` }));
    const executed = results.filter((r) => r.status === 200);
    assert.equal(executed.length, 1, JSON.stringify(results.filter((r) => r.status !== 409).map((r) => r.body)));
    assert.equal(executed[0]!.headers.get('idempotent-replayed'), 'false');
    for (const r of results.filter((x) => x.status !== 200)) assertError(r, 409, 'idempotency_key_conflict');
    assert.deepEqual(await rows(project.id), { posts: 1, events: 1 });
  });

  it('refuses an empty or over-long Idempotency-Key with 400 invalid_request on both processes, writing nothing', async () => {
    const { key, project } = await workspaceWithKey();
    for (const url of [here.url, other.url]) {
      for (const bad of ['', ' ', 'x'.repeat(65), 'y'.repeat(10_000)]) {
        assertError(
          await client(url, key)('POST', '/v1/posts', { body: { projectId: project.id }, headers: { 'Idempotency-Key': bad } }),
          400,
          'invalid_request',
        );
      }
    }
    assert.deepEqual(await rows(project.id), { posts: 0, events: 0 });
  });

  describe('through MCP', () => {
    let stack: McpStack;
    let agents: Client[] = [];
    after(async () => {
      await Promise.all(agents.map((c) => c.close()));
      await stack?.close();
    });

    it('runs 20 concurrent identical create_post_draft calls on two processes once, refuses an empty or long key, and keeps one key apart between the doors', async () => {
      stack = await startMcpStack();
      const { key, project } = await workspaceWithKey();
      // A second API process with its own MCP door (the MCP harness's process knows its MCP URL).
      const second = await startApiProcess({ RATE_LIMIT_READ: '1000000', RATE_LIMIT_WRITE: '1000000' });
      agents = [await connect('streamable', stack.mcpUrl, key), await connect('streamable', second.mcpUrl, key)];
      try {
        const k = uniqueKey();
        const results = await Promise.all(
          Array.from(
            { length: 20 },
            (_, i) =>
              agents[i % 2]!.callTool({
                name: 'create_post_draft',
                arguments: { projectId: project.id, content: 'Agent once', idempotencyKey: k },
              }) as Promise<CallToolResult>,
          ),
        );
        for (const r of results) assert.notEqual(r.isError, true, JSON.stringify(r.structuredContent));
        assert.equal(new Set(results.map((r) => (r.structuredContent as any).id ?? (r.structuredContent as any).data?.id)).size, 1);
        assert.equal(results.filter((r) => r._meta?.idempotentReplayed === false).length, 1);
        assert.deepEqual(await rows(project.id), { posts: 1, events: 1 });
        for (const bad of ['', 'x'.repeat(65)]) {
          const r = (await agents[0]!.callTool({
            name: 'create_post_draft',
            arguments: { projectId: project.id, idempotencyKey: bad },
          })) as CallToolResult;
          assert.equal(r.isError, true);
          assert.equal((r.structuredContent as { code: string }).code, 'invalid_request');
        }
        assert.deepEqual(await rows(project.id), { posts: 1, events: 1 });

        // One key on both doors at once: a key used on REST never replays a tool's answer (nor
        // the reverse), so one door's first call runs, its twins replay it, the other door's are
        // conflicts; still one post.
        const shared = uniqueKey();
        const content = 'One key, two doors';
        const mixed = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            i % 2
              ? client(here.url, key)('POST', '/v1/posts', {
                  body: { projectId: project.id, content },
                  headers: { 'Idempotency-Key': shared },
                }).then((r) => ({ door: 'rest', ok: r.status === 200, code: r.body?.error?.code as string | undefined, status: r.status }))
              : (
                  agents[i % 4 === 0 ? 0 : 1]!.callTool({
                    name: 'create_post_draft',
                    arguments: { projectId: project.id, content, idempotencyKey: shared },
                  }) as Promise<CallToolResult>
                ).then((r) => ({ door: 'mcp', ok: r.isError !== true, code: (r.structuredContent as { code?: string }).code, status: 0 })),
          ),
        );
        const winners = new Set(mixed.filter((m) => m.ok).map((m) => m.door));
        assert.equal(winners.size, 1, JSON.stringify(mixed));
        for (const m of mixed.filter((x) => !x.ok)) assert.equal(m.code, 'idempotency_key_conflict', JSON.stringify(m));
        assert.equal(mixed.filter((m) => m.ok).length, 10, 'every call of the winning door got the answer');
        assert.deepEqual(await rows(project.id), { posts: 2, events: 2 });
      } finally {
        await second.close();
      }
    });
  });
});
