import assert from 'node:assert/strict';
import { client, startApi, type CallResult, type TestServer } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError, startApiProcess, type ApiProcess } from '../support/foundation';
import { redis } from '../../lib/redis';

// spec 8: reads share one sliding 60 s bucket of 120 per workspace, enforced in Redis so that
// every API server (and process) spends the same budget. Headers ride on every answer.

const LIMIT = 120;

function assertRateHeaders(res: CallResult, expect: { remaining?: number } = {}) {
  assert.equal(res.headers.get('x-ratelimit-limit'), String(LIMIT));
  const remaining = res.headers.get('x-ratelimit-remaining');
  const reset = res.headers.get('x-ratelimit-reset');
  assert.match(remaining ?? '', /^\d+$/);
  assert.match(reset ?? '', /^\d+$/);
  const nowS = Date.now() / 1000;
  // Reset is the Unix second at which the oldest counted request leaves the 60 s window.
  assert.ok(Number(reset) >= Math.floor(nowS) && Number(reset) <= Math.ceil(nowS) + 61, `reset ${reset} vs now ${nowS}`);
  if (expect.remaining !== undefined) assert.equal(Number(remaining), expect.remaining);
}

/** `n` reads, run concurrently in batches, spread round-robin over `urls`. */
async function burst(urls: string[], key: string, n: number, path = '/v1/health/auth'): Promise<CallResult[]> {
  const out: CallResult[] = [];
  for (let start = 0; start < n; start += 40) {
    const batch = Array.from({ length: Math.min(40, n - start) }, (_, i) => client(urls[(start + i) % urls.length]!, key)('GET', path));
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

describe('read rate limit (spec 8)', function () {
  this.timeout(60_000);
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    a = await startApi();
    b = await startApi();
  });
  after(async () => {
    await a.close();
    await b.close();
  });

  it('admits 120 reads a minute, then answers 429 rate_limited with Retry-After', async () => {
    const { key, project } = await workspaceWithKey();
    const first = await client(a.url, key)('GET', '/v1/workspaces/me');
    assert.equal(first.status, 200);
    assertRateHeaders(first, { remaining: LIMIT - 1 });

    // Different read endpoints draw from the same bucket.
    const rest = await burst([a.url], key, LIMIT - 1, `/v1/posts?projectId=${project.id}`);
    for (const res of rest) {
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assertRateHeaders(res);
    }
    const remainders = rest.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((x, y) => x - y);
    assert.deepEqual(
      remainders,
      Array.from({ length: LIMIT - 1 }, (_, i) => i),
      'each admitted read takes one unit',
    );

    const over = await client(a.url, key)('GET', '/v1/projects');
    assertError(over, 429, 'rate_limited');
    assertRateHeaders(over, { remaining: 0 });
    const retryAfter = over.headers.get('retry-after');
    assert.match(retryAfter ?? '', /^\d+$/);
    assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60, `Retry-After ${retryAfter}`);
  });

  it('keeps workspaces apart', async () => {
    const busy = await workspaceWithKey();
    await burst([a.url], busy.key, LIMIT);
    assertError(await client(a.url, busy.key)('GET', '/v1/health/auth'), 429, 'rate_limited');
    const quiet = await workspaceWithKey();
    const res = await client(a.url, quiet.key)('GET', '/v1/health/auth');
    assert.equal(res.status, 200);
    assertRateHeaders(res, { remaining: LIMIT - 1 });
  });

  it('still counts after Redis forgot the limiter script (sent by SHA, resent on NOSCRIPT)', async () => {
    const { key } = await workspaceWithKey();
    assertRateHeaders(await client(a.url, key)('GET', '/v1/health/auth'), { remaining: LIMIT - 1 });
    await redis().script('FLUSH');
    assertRateHeaders(await client(a.url, key)('GET', '/v1/health/auth'), { remaining: LIMIT - 2 });
    assertRateHeaders(await client(a.url, key)('GET', '/v1/health/auth'), { remaining: LIMIT - 3 });
  });

  it('shares one budget across two API servers', async () => {
    const { key } = await workspaceWithKey();
    const results = await burst([a.url, b.url], key, LIMIT);
    assert.ok(
      results.every((r) => r.status === 200),
      `statuses: ${[...new Set(results.map((r) => r.status))]}`,
    );
    assertError(await client(a.url, key)('GET', '/v1/health/auth'), 429, 'rate_limited');
    assertError(await client(b.url, key)('GET', '/v1/health/auth'), 429, 'rate_limited');
  });

  describe('with a second API process', () => {
    let proc: ApiProcess;
    before(async () => {
      proc = await startApiProcess();
    });
    after(async () => {
      await proc?.close();
    });

    it('spends the same budget as the in-process servers', async () => {
      const { key } = await workspaceWithKey();
      const results = await burst([a.url, proc.url], key, LIMIT);
      assert.ok(
        results.every((r) => r.status === 200),
        `statuses: ${[...new Set(results.map((r) => r.status))]}`,
      );
      assertError(await client(proc.url, key)('GET', '/v1/health/auth'), 429, 'rate_limited');
      assertError(await client(b.url, key)('GET', '/v1/health/auth'), 429, 'rate_limited');
    });
  });
});
