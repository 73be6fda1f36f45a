import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import type Koa from 'koa';
import { createApp } from '../../api/app';
import { db } from '../../lib/db';
import { newId, randomBase62 } from '../../lib/ids';
import { serveOnEphemeralPort, type CallResult, type TestServer } from './app';
import { apiAnswers, launch } from '../../tooling/launcher';
import { freePort } from '../../tooling/ports';

// Helpers for the foundation suites (test/api/*.test.ts): servers with extra test-only routes,
// a second API *process*, and direct row inserts for volumes the API would make slow to build.

/**
 * The real app with extra middleware appended after the production router. Unmatched requests
 * fall through the production router (and its allowedMethods), so a test-only route mounted
 * here runs through the very same requestContext / parseBody / adapter chain.
 */
export async function startApiWith(configure: (app: Koa) => void): Promise<TestServer> {
  const app = createApp();
  configure(app);
  return serveOnEphemeralPort(app);
}

export interface ApiProcess extends TestServer {
  /** The process's MCP transport. */
  mcpUrl: string;
  child: ChildProcess;
}

/**
 * `api/main.ts` as a separate OS process against the same Postgres and Redis. In-process
 * servers share module state (the API-key cache), so only a second process can prove that
 * something travels through Redis rather than through memory.
 */
export async function startApiProcess(env: Record<string, string> = {}): Promise<ApiProcess> {
  // A free port can be taken by another process before the child listens on it: try again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startApiProcessOnce(env);
    } catch (err) {
      if (attempt === 3 || !(err instanceof Error) || !err.message.includes('before it was ready')) throw err;
    }
  }
}

async function startApiProcessOnce(env: Record<string, string>): Promise<ApiProcess> {
  const port = await freePort();
  let mcpPort = await freePort();
  while (mcpPort === port) mcpPort = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const mcpUrl = `http://127.0.0.1:${mcpPort}`;
  const api = await launch({
    kind: 'api',
    name: 'the API process',
    env: { PORT: String(port), MCP_PORT: String(mcpPort), PUBLIC_URL: url, MCP_PUBLIC_URL: mcpUrl, LOG_LEVEL: 'error', ...env },
    // Up when both doors answer (the REST and the MCP listener start one after the other).
    ready: apiAnswers(port, mcpPort),
    readyTimeoutMs: 90_000,
    // A graceful stop first; a process that hangs on shutdown must not hang the suite.
    stopGraceMs: 5_000,
    onLine: (line, stream) => stream === 'stderr' && process.stderr.write(`${line}\n`),
  });
  return { url, mcpUrl, child: api.child, close: async () => void (await api.stop()) };
}

/** Inserts posts directly; `createdAt` may repeat to exercise the id tie-break of the keyset. */
export async function insertPosts(input: {
  workspaceId: string;
  projectId: string;
  rows: Array<{ createdAt: Date; status?: string; title?: string }>;
}): Promise<string[]> {
  const rows = input.rows.map((r) => ({
    id: newId('post'),
    workspace_id: input.workspaceId,
    project_id: input.projectId,
    status: r.status ?? 'draft',
    title: r.title ?? '',
    content: 'Inserted for a pagination test',
    content_type: 'PERSONAL',
    created_at: r.createdAt,
  }));
  for (let i = 0; i < rows.length; i += 500) await db()('posts').insert(rows.slice(i, i + 500));
  return rows.map((r) => r.id);
}

/** Users with memberships of `workspaceId`, in bulk (the roster bound is 100 members). */
export async function insertMembers(
  workspaceId: string,
  roles: string[],
  createdAt?: (i: number) => Date,
): Promise<Array<{ userId: string; membershipId: string; role: string }>> {
  const out = roles.map((role) => ({ userId: newId('user'), membershipId: newId('membership'), role }));
  await db()('users').insert(
    out.map((m) => ({ id: m.userId, email: `m-${randomBase62(12)}@example.com`, name: `Member ${randomBase62(4)}` })),
  );
  await db()('memberships').insert(
    out.map((m, i) => ({
      id: m.membershipId,
      workspace_id: workspaceId,
      user_id: m.userId,
      role: m.role,
      ...(createdAt ? { created_at: createdAt(i) } : {}),
    })),
  );
  return out;
}

/**
 * Asserts the spec 7.1 envelope: `{ error: { code, message, request_id, docs_url, details? } }`
 * with the expected status and code, and a `req_` request id equal to the X-Request-Id header.
 */
export function assertError(res: CallResult, status: number, code: string): ApiErrorBody {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status}: ${JSON.stringify(res.body)}`);
  assert.equal(typeof res.body, 'object', `body is not JSON: ${String(res.body)}`);
  const err = assertErrorEnvelope(res.body, `${status} ${code}`);
  assert.equal(err.code, code, err.message);
  assert.ok(err.message.length > 0);
  assert.match(err.request_id, /^req_[A-Za-z0-9]+$/);
  assert.equal(err.request_id, res.headers.get('x-request-id'));
  assert.doesNotThrow(() => new URL(err.docs_url), `docs_url is not a URI: ${err.docs_url}`);
  const allowed = new Set(['code', 'message', 'request_id', 'docs_url', 'details']);
  for (const k of Object.keys(err)) assert.ok(allowed.has(k), `unexpected envelope field ${k}`);
  return err;
}

/**
 * The shape of the spec 7.1 error envelope, whichever door or listener answered: an `error`
 * object with a string code and message, a `req_` request id and a docs URL. `what` names the
 * request in failure messages. Returns the `error` object for the caller's own checks.
 */
export function assertErrorEnvelope(body: unknown, what: string): ApiErrorBody {
  const err = (body as { error?: unknown } | null)?.error as ApiErrorBody | undefined;
  assert.ok(
    body && typeof body === 'object' && err && typeof err === 'object',
    `${what}: no error envelope: ${JSON.stringify(body)?.slice(0, 200)}`,
  );
  assert.equal(typeof err.code, 'string', what);
  assert.equal(typeof err.message, 'string', what);
  assert.match(err.request_id, /^req_/, what);
  assert.equal(typeof err.docs_url, 'string', what);
  return err;
}

export interface ApiErrorBody {
  code: string;
  message: string;
  request_id: string;
  docs_url: string;
  details?: Record<string, any>;
}
