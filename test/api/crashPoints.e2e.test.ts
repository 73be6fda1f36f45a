import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { reconcileQueuedJobs } from '../../lib/jobs/reconcile';
import { randomBase62 } from '../../lib/ids';
import type { CrashPoint } from '../../lib/crashPoints';
import { client, type CallResult } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { startApiProcess, type ApiProcess } from '../support/foundation';
import { generationBody } from '../generation/support';
import { png } from '../media/images';
import { oauthToken } from '../oauth/support';
import { callTool, connect } from '../support/mcp';

// spec 8 Idempotency across crashes (docs/reliability.md "Idempotency"): an API process is
// SIGKILLed at each point of an idempotent write (lib/crashPoints.ts, `CRASH_AT`), and the client
// retries the same request with the same key on a second API process. Whatever the point, the
// request has exactly one effect (its rows counted), and the answer the client ends with is the
// request's one answer: run for the first time when nothing had committed, replayed
// (`Idempotent-Replayed: true`, the same body on every replay) once it had.

type Workspace = Awaited<ReturnType<typeof workspaceWithKey>>;

interface IdempotentWrite {
  operation: string;
  path: string;
  body: (ws: Workspace) => Record<string, unknown>;
  /** The rows one request makes, in the workspace. */
  effects: Record<string, (workspaceId: string) => Promise<number>>;
  /** The points this write is killed at (every point for the writes the issue names, the riskiest elsewhere). */
  points: CrashPoint[];
  /** The caller: an API key, or an OAuth token where the scope is one keys cannot hold (spec 5.1 webhooks:manage). */
  oauth?: boolean;
  /** What must still happen once the answer is in: work the crash kept from running after the COMMIT. */
  recovers?: (ws: Workspace, answer: CallResult) => Promise<void>;
}

const count =
  (table: string, extra: Record<string, unknown> = {}) =>
  async (workspaceId: string) =>
    Number(
      (await db()(table)
        .where({ workspace_id: workspaceId, ...extra })
        .count({ n: '*' })
        .first())!.n,
    );

const ALL: CrashPoint[] = ['claimed', 'answered', 'committed', 'responded'];
const AFTER_EFFECT: CrashPoint[] = ['committed'];

/** A job left QUEUED with no workflow by the crash is started by the reconciler, once. */
async function jobStartsOnce(ws: Workspace, answer: CallResult): Promise<void> {
  const jobId = answer.body.data.id as string;
  await reconcileQueuedJobs(db(), 0);
  const row = await db()('jobs').where({ id: jobId, workspace_id: ws.workspace.id }).first('workflow_started_at');
  assert.ok(row?.workflow_started_at, 'the job has a workflow');
  // A second pass has nothing left to start for this job (its workflow id is the job id).
  await reconcileQueuedJobs(db(), 0);
}

const WRITES: IdempotentWrite[] = [
  {
    operation: 'posts.create',
    path: '/v1/posts',
    body: (ws) => ({
      projectId: ws.project.id,
      content: 'One post, whatever dies',
      scheduledFor: new Date(Date.now() + 3600_000).toISOString(),
    }),
    effects: { posts: count('posts'), 'post.created events': count('outbox_events', { type: 'post.created' }) },
    points: ALL,
  },
  {
    operation: 'posts.generate',
    path: '/v1/posts/generations',
    body: (ws) => generationBody(ws.project.id),
    effects: {
      jobs: count('jobs'),
      'spend reservations': async (w) =>
        Number((await db()('jobs').where({ workspace_id: w }).where('reserved_cents', '>', 0).count({ n: '*' }).first())!.n),
    },
    points: ['answered', 'committed', 'responded'],
    recovers: jobStartsOnce,
  },
  {
    operation: 'media.import',
    path: '/v1/media',
    body: (ws) => ({ projectId: ws.project.id, content_base64: png(64, 48).toString('base64'), alt: 'One asset' }),
    effects: { media: count('media_assets') },
    points: ['answered', 'committed', 'responded'],
  },
  {
    operation: 'notes.create',
    path: '/v1/notes',
    body: (ws) => ({ projectId: ws.project.id, content: 'One note' }),
    effects: { notes: count('notes') },
    points: AFTER_EFFECT,
  },
  {
    operation: 'ideas.create',
    path: '/v1/ideas',
    body: (ws) => ({ projectId: ws.project.id, title: 'One idea' }),
    effects: { ideas: count('ideas') },
    points: AFTER_EFFECT,
  },
  {
    operation: 'sources.create',
    path: '/v1/sources',
    body: (ws) => ({ projectId: ws.project.id, type: 'text', name: 'One source', text: 'A source that is written once.' }),
    effects: { sources: count('sources') },
    points: AFTER_EFFECT,
  },
  {
    operation: 'knowledge.create',
    path: '/v1/knowledge',
    body: (ws) => ({ projectId: ws.project.id, type: 'text', text: 'Knowledge that is indexed once.' }),
    effects: { 'ingest jobs': count('jobs') },
    points: AFTER_EFFECT,
    recovers: jobStartsOnce,
  },
  {
    operation: 'uploads.create',
    path: '/v1/uploads',
    body: () => ({ fileName: 'one.png', contentType: 'image/png', bytes: 1024, purpose: 'media' }),
    effects: { uploads: count('uploads') },
    points: AFTER_EFFECT,
  },
  {
    operation: 'webhookEndpoints.create',
    path: '/v1/webhook-endpoints',
    body: () => ({ url: 'https://hooks.example.com/one', events: ['post.created'] }),
    effects: { endpoints: count('webhook_endpoints') },
    oauth: true,
    points: AFTER_EFFECT,
  },
];

describe('Idempotency-Key across API process crashes (spec 8, end to end)', function () {
  this.timeout(600_000);
  let survivor: ApiProcess;

  before(async () => {
    survivor = await startApiProcess();
  });
  after(() => survivor?.close());

  /** Retries as a client does after a lost answer: the same request, the same key, until an answer that is not "still in progress". */
  async function retry(call: ReturnType<typeof client>, write: IdempotentWrite, body: unknown, key: string): Promise<CallResult> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const res = await call('POST', write.path, { body, headers: { 'Idempotency-Key': key } });
      if (res.status !== 409 || res.body?.error?.code === 'idempotency_key_conflict') return res;
      assert.ok(Date.now() < deadline, `the key is still "in progress" 20 s after the crash: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  // The MCP door runs the same pipeline: a tool's `idempotencyKey` is the header's twin (spec 4.9).
  for (const point of ['answered', 'committed'] satisfies CrashPoint[]) {
    it(`MCP create_post_draft: killed at "${point}", the retry through another process's MCP door has exactly one effect`, async () => {
      const ws = await workspaceWithKey();
      const args = {
        projectId: ws.project.id,
        content: 'One post through the agent door',
        idempotencyKey: `mcp-crash-${randomBase62(10)}`,
      };
      const doomed = await startApiProcess({
        CRASH_AT: `posts.create:${point}`,
        DB_POOL_MAX: '4',
        PUBLIC_URL: survivor.url,
        MCP_PUBLIC_URL: survivor.mcpUrl,
      });
      const doomedClient = await connect('streamable', doomed.mcpUrl, ws.key);
      try {
        // The POST's connection dies with the process; the client gives up on the call then.
        await assert.rejects(
          doomedClient.callTool({ name: 'create_post_draft', arguments: args }, undefined, { timeout: 5_000 }),
          'the call dies with its process',
        );
      } finally {
        await doomedClient.close().catch(() => undefined);
        await doomed.close();
      }
      const agent = await connect('streamable', survivor.mcpUrl, ws.key);
      try {
        const answer = await callTool(agent, 'create_post_draft', args);
        assert.notEqual(answer.isError, true, JSON.stringify(answer.structuredContent));
        assert.equal(answer._meta?.idempotentReplayed, point === 'committed');
        assert.equal(await count('posts')(ws.workspace.id), 1);
        const again = await callTool(agent, 'create_post_draft', args);
        assert.equal(again._meta?.idempotentReplayed, true);
        assert.deepEqual(again.structuredContent, answer.structuredContent);
        assert.equal(await count('posts')(ws.workspace.id), 1);
      } finally {
        await agent.close();
      }
    });
  }

  for (const write of WRITES) {
    for (const point of write.points) {
      it(`${write.operation}: killed at "${point}", the retry on another process has exactly one effect and one answer`, async () => {
        const ws = await workspaceWithKey();
        const credential = write.oauth ? await oauthToken(survivor.url, ws.workspace.id) : ws.key;
        const body = write.body(ws);
        const key = `crash-${point}-${randomBase62(10)}`;
        // Behind one public address, as a deployment's API processes are (tokens name it).
        const doomed = await startApiProcess({
          CRASH_AT: `${write.operation}:${point}`,
          DB_POOL_MAX: '4',
          PUBLIC_URL: survivor.url,
          MCP_PUBLIC_URL: survivor.mcpUrl,
        });
        const exited = new Promise<NodeJS.Signals | null>((resolve) => doomed.child.once('exit', (_code, signal) => resolve(signal)));
        try {
          await assert.rejects(
            client(doomed.url, credential)('POST', write.path, { body, headers: { 'Idempotency-Key': key } }),
            'the request dies with its process',
          );
          assert.equal(await exited, 'SIGKILL');
        } finally {
          await doomed.close();
        }

        const call = client(survivor.url, credential);
        const answer = await retry(call, write, body, key);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        // Nothing committed before these points: the retry is the request's first run.
        const replayedExpected = point === 'committed' || point === 'responded';
        assert.equal(answer.headers.get('idempotent-replayed'), String(replayedExpected));
        for (const [what, rows] of Object.entries(write.effects)) assert.equal(await rows(ws.workspace.id), 1, `${what} of one request`);

        // The answer names the one effect, and every later retry replays it unchanged.
        const again = await call('POST', write.path, { body, headers: { 'Idempotency-Key': key } });
        assert.equal(again.status, 200);
        assert.equal(again.headers.get('idempotent-replayed'), 'true');
        assert.deepEqual(again.body, answer.body);
        for (const [what, rows] of Object.entries(write.effects)) assert.equal(await rows(ws.workspace.id), 1, `${what} after a replay`);

        await write.recovers?.(ws, answer);
      });
    }
  }
});
