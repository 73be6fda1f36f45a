import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { client } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { startApiProcess, type ApiProcess } from '../support/foundation';
import { waitFor } from '../support/wait';
import { freePort, portAcceptsConnections } from '../../tooling/ports';

// docs/reliability.md "Redis down": the rate limiter's store is Redis, which holds only what may
// be lost (ARCHITECTURE.md). When it is unreachable the limiter admits requests uncounted (fail
// open) instead of turning every authenticated request into a 500, and counts again once
// Redis is back. An API process of its own runs against a Redis server of its own, stopped here.

function startRedis(port: number): ChildProcess {
  return spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
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
