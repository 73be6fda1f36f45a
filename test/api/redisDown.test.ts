import { RECORD_RECHECK_MS } from '../../api/mcp/streamable';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { client } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { startApiProcess, type ApiProcess } from '../support/foundation';
import { waitFor } from '../support/wait';
import { freePort, portAcceptsConnections } from '../../tooling/ports';

// docs/reliability.md "Redis down": the rate limiter's store is Redis, which holds only what may
// be lost (ARCHITECTURE.md). When it is unreachable the limiter admits requests uncounted (fail
// open) instead of turning every authenticated request into a 500, and counts again once
// Redis is back. An API process of its own runs against a Redis server of its own, stopped here.

/** Without `dir`, nothing persists; with it, every write is in an append-only file that survives a SIGKILL. */
function startRedis(port: number, dir?: string): ChildProcess {
  const persistence = dir ? ['--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  return spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence], { stdio: 'ignore' });
}

describe('rate limiting with Redis down (fail open)', function () {
  this.timeout(90_000);
  let redisProcess: ChildProcess;
  let api: ApiProcess;
  let port: number;

  before(async () => {
    port = await freePort();
    redisProcess = startRedis(port);
    await waitFor(() => portAcceptsConnections(port), 10_000, 'the test Redis', 100);
    api = await startApiProcess({ REDIS_URL: `redis://127.0.0.1:${port}` });
  });
  after(async () => {
    await api?.close();
    redisProcess?.kill('SIGKILL');
  });

  it('answers 200 while its Redis is stopped, then counts again once Redis is back', async () => {
    const ws = await workspaceWithKey();
    const call = client(api.url, ws.key);
    const before = await call('GET', '/v1/projects');
    assert.equal(before.status, 200);
    assert.equal(before.headers.get('x-ratelimit-remaining'), '119', 'counted while Redis is up');

    redisProcess.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    for (let i = 0; i < 3; i++) {
      const res = await call('GET', '/v1/projects');
      assert.equal(res.status, 200, `request ${i} with Redis down: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.data[0].id, ws.project.id);
    }

    redisProcess = startRedis(port);
    await waitFor(() => portAcceptsConnections(port), 10_000, 'the test Redis again', 100);
    // Counting resumes after the limiter's short back-off: the remaining count drops again.
    const counted = await waitFor(
      async () => {
        const res = await call('GET', '/v1/projects');
        return res.status === 200 && Number(res.headers.get('x-ratelimit-remaining')) < 120 ? res : false;
      },
      30_000,
      'counting again',
      500,
    );
    assert.equal(counted.status, 200);
  });
});

// docs/reliability.md "Redis down", MCP sessions: they fail closed. A session's record is what
// authenticates its requests, so without Redis the transport answers 503
// temporarily_unavailable with Retry-After (never a 500), and recovers by itself when Redis is
// back; a session opened before the outage is usable again (its record was persisted here).
describe('MCP sessions with Redis down (503, then recovery)', function () {
  this.timeout(90_000);
  const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const INIT = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'redis-down', version: '1' } },
  };
  let redisProcess: ChildProcess;
  let api: ApiProcess;
  let port: number;
  let dir: string;

  before(async () => {
    port = await freePort();
    dir = await mkdtemp(path.join(tmpdir(), 'redis-down-'));
    redisProcess = startRedis(port, dir);
    await waitFor(() => portAcceptsConnections(port), 10_000, 'the test Redis', 100);
    api = await startApiProcess({ REDIS_URL: `redis://127.0.0.1:${port}` });
  });
  after(async () => {
    await api?.close();
    redisProcess?.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  async function mcp(key: string, body: unknown, sessionId?: string) {
    const res = await fetch(`${api.mcpUrl}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${key}`, ...(sessionId ? { 'mcp-session-id': sessionId } : {}) },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    // A JSON answer, or the data line of a one-event SSE answer.
    const data = text.startsWith('{')
      ? text
      : (text
          .split('\n')
          .find((l) => l.startsWith('data: {'))
          ?.slice(6) ?? 'null');
    return { status: res.status, headers: res.headers, json: JSON.parse(data) as any };
  }
  const listTools = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });
  const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };

  function assertUnavailable(res: { status: number; headers: Headers; json: any }, what: string) {
    assert.equal(res.status, 503, `${what}: ${JSON.stringify(res.json)}`);
    assert.equal(res.headers.get('retry-after'), '5', what);
    assert.equal(res.json.error.data.code, 'temporarily_unavailable', what);
    assert.equal(res.json.error.data.details.retryAfterSeconds, 5, what);
    assert.match(res.json.error.data.requestId, /^req_/, what);
  }

  it('answers 503 temporarily_unavailable with Retry-After while Redis is stopped, and serves again once it is back', async () => {
    const ws = await workspaceWithKey();
    const opened = await mcp(ws.key, INIT);
    assert.equal(opened.status, 200);
    const sessionId = opened.headers.get('mcp-session-id');
    assert.ok(sessionId, 'a session id while Redis is up');
    await mcp(ws.key, initialized, sessionId);
    const listed = await mcp(ws.key, listTools(2), sessionId);
    assert.equal(listed.status, 200);
    assert.ok(listed.json.result.tools.length > 0);

    redisProcess.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    assertUnavailable(await mcp(ws.key, INIT), 'initialize with Redis down');
    // Within RECORD_RECHECK_MS a process trusts the session record it holds (streamable.ts): the
    // call is answered, not left hanging, although its events cannot be stored for resumption.
    const held = await mcp(ws.key, listTools(3), sessionId);
    assert.ok(held.status === 200 || held.status === 503, `a call in a held session: ${held.status}`);
    // Past that window the record must be read again: 503.
    await new Promise((r) => setTimeout(r, RECORD_RECHECK_MS + 200));
    // The refusal is prompt: the shared client's reconnection back-off is capped (lib/redis.ts).
    let asked = Date.now();
    assertUnavailable(await mcp(ws.key, listTools(5), sessionId), 'a call in an existing session with Redis down');
    assert.ok(Date.now() - asked < 3_000, `the 503 took ${Date.now() - asked} ms`);
    asked = Date.now();
    const sse = await fetch(`${api.mcpUrl}/sse`, { headers: { Accept: 'text/event-stream', authorization: `Bearer ${ws.key}` } });
    assertUnavailable({ status: sse.status, headers: sse.headers, json: await sse.json() }, 'opening an SSE session with Redis down');
    assert.ok(Date.now() - asked < 3_000, `the SSE 503 took ${Date.now() - asked} ms`);

    redisProcess = startRedis(port, dir);
    await waitFor(() => portAcceptsConnections(port), 10_000, 'the test Redis again', 100);
    const again = await waitFor(
      async () => {
        const res = await mcp(ws.key, listTools(4), sessionId);
        return res.status === 200 ? res : false;
      },
      30_000,
      'the session serving again',
      250,
    );
    assert.ok(again.json.result.tools.length > 0, 'the session opened before the outage works after it');
    const fresh = await mcp(ws.key, INIT);
    assert.equal(fresh.status, 200, 'a new session can be opened');
    assert.ok(fresh.headers.get('mcp-session-id'));
  });
});
