import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { probesFor, readinessRouter } from '../../api/health/ready';
import { config } from '../../lib/config';
import { temporalAddress } from '../../lib/temporal/client';
import { serveOnEphemeralPort, useApi } from '../support/app';

// issue 17: GET /v1/health/ready, unauthenticated, 200 while Postgres, Redis and Temporal
// answer and 503 naming the one that does not; /v1/health stays liveness.

function serve(router: ReturnType<typeof readinessRouter>): Promise<{ url: string; close(): Promise<void> }> {
  const app = new Koa();
  app.use(router.routes());
  return serveOnEphemeralPort(app);
}

/** A port nothing listens on: one we bound and released. */
async function deadPort(): Promise<number> {
  const s: Server = await new Promise((resolve) => {
    const x = new Koa().listen(0, '127.0.0.1', () => resolve(x));
  });
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

describe('GET /v1/health/ready', () => {
  const api = useApi();

  it('is 200 without a credential, with each dependency ok, and never cached', async () => {
    const res = await fetch(`${api.url}/v1/health/ready`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const body = (await res.json()) as { data: { status: string; checks: Record<string, { status: string }> } };
    assert.equal(body.data.status, 'ready');
    assert.deepEqual(Object.keys(body.data.checks).sort(), ['postgres', 'redis', 'temporal']);
    for (const c of Object.values(body.data.checks)) assert.equal(c.status, 'ok');
  });

  for (const dependency of ['postgres', 'redis', 'temporal'] as const) {
    it(`is 503 naming ${dependency} while it is unreachable, and 200 once it answers again`, async () => {
      const port = await deadPort();
      const real = { databaseUrl: config.databaseUrl, redisUrl: config.redisUrl, temporalAddress: temporalAddress() };
      const dead = {
        postgres: { databaseUrl: `postgres://postgres@127.0.0.1:${port}/none` },
        redis: { redisUrl: `redis://127.0.0.1:${port}` },
        temporal: { temporalAddress: `127.0.0.1:${port}` },
      }[dependency];
      const down = probesFor({ ...real, ...dead });
      const up = probesFor(real);
      const downServer = await serve(readinessRouter(down));
      const upServer = await serve(readinessRouter(up));
      try {
        const res = await fetch(`${downServer.url}/v1/health/ready`);
        assert.equal(res.status, 503);
        const body = (await res.json()) as { data: { status: string; checks: Record<string, { status: string; error?: string }> } };
        assert.equal(body.data.status, 'unready');
        for (const [name, check] of Object.entries(body.data.checks)) {
          assert.equal(check.status, name === dependency ? 'unavailable' : 'ok', `${name}: ${check.error}`);
        }
        assert.equal((await fetch(`${upServer.url}/v1/health/ready`)).status, 200);
      } finally {
        await downServer.close();
        await upServer.close();
        await down.close();
        await up.close();
      }
    });
  }
});
