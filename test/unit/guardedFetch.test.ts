import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseOrigins } from '../../lib/config';
import { FetchError, guardedFetch, type GuardedFetchOptions } from '../../lib/outbound/guardedFetch';
import { onAllowedOrigin, type Resolver } from '../../lib/outbound/resolve';

// The shared guard's exact-origin allowance (docs/knowledge.md "URL ingest",
// KNOWLEDGE_FETCH_ALLOW_ORIGINS): with loopback refused, one allowed origin on 127.0.0.1 is
// fetched, and every other way back into loopback from it — another port, `localhost`, `127.1`,
// `[::1]`, odd spellings of the same address — is refused before anything is sent. Two real
// HTTP servers on loopback.

describe('guarded fetch: exact allowed origins while loopback is refused', function () {
  let allowed: { server: Server; origin: string; port: number };
  let other: { server: Server; origin: string; hits: number };
  let location = '/';

  async function listen(handler: Parameters<typeof createServer>[1]) {
    const server = createServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    return { server, port, origin: `http://127.0.0.1:${port}` };
  }
  before(async () => {
    allowed = await listen((req, res) => {
      if (req.url === '/bounce') res.writeHead(302, { location }).end();
      else res.writeHead(200, { 'content-type': 'text/plain' }).end(`allowed ${req.url}`);
    });
    const o = await listen((_req, res) => {
      other.hits++;
      res.writeHead(200, { 'content-type': 'text/plain' }).end('other');
    });
    other = { server: o.server, origin: o.origin, hits: 0 };
  });
  after(async () => {
    for (const s of [allowed.server, other.server]) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  });

  // `localhost` answers loopback here whatever the machine's resolver says.
  const resolve: Resolver = async (host) => {
    if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
    throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  };
  const opts = (over: Partial<GuardedFetchOptions> = {}): GuardedFetchOptions => ({
    allowLoopback: false,
    allowOrigins: [allowed.origin],
    allowHttp: true,
    timeoutMs: 5_000,
    maxBytes: 1024 * 1024,
    maxRedirects: 5,
    resolve,
    ...over,
  });
  async function refused(url: string, o = opts()) {
    await assert.rejects(guardedFetch(url, o), (e: unknown) => {
      assert.ok(e instanceof FetchError, String(e));
      assert.equal(e.code, 'url_refused', e.message);
      assert.match(e.message, /loopback|private/);
      return true;
    });
  }

  it('fetches the allowed origin itself, and follows redirects that stay on it', async () => {
    const page = await guardedFetch(`${allowed.origin}/article`, opts());
    assert.equal(page.body.toString(), 'allowed /article');
    for (const to of ['/next', `${allowed.origin}/next`, `//127.0.0.1:${allowed.port}/next`]) {
      location = to;
      const hop = await guardedFetch(`${allowed.origin}/bounce`, opts());
      assert.equal(hop.body.toString(), 'allowed /next', to);
      assert.equal(hop.url, `${allowed.origin}/next`);
    }
  });

  it('refuses a redirect from the allowed origin to any other loopback origin or spelling; nothing reaches it', async () => {
    const port = allowed.port;
    for (const to of [
      `${other.origin}/x`, // another port
      `http://localhost:${port}/x`,
      `http://127.1:${port}/x`,
      `http://[::1]:${port}/x`,
      `http://2130706433:${port}/x`,
      `http://0x7f.0.0.1:${port}/x`,
      `http:\\\\127.1:${port}\\x`,
      `//localhost:${port}/x`,
      `https://127.0.0.1:${port}/x`, // another scheme is another origin
    ]) {
      location = to;
      await refused(`${allowed.origin}/bounce`).catch((e: Error) => {
        throw new Error(`${to}: ${e.message}`);
      });
    }
    assert.equal(other.hits, 0);
  });

  it('an allowed origin relaxes loopback only: private ranges stay refused; without the allowance loopback is refused', async () => {
    await refused('http://10.0.0.8/', opts({ allowOrigins: ['http://10.0.0.8'] }));
    await refused(`${allowed.origin}/article`, opts({ allowOrigins: [] }));
    await refused(`http://127.1:${allowed.port}/article`);
  });

  it('KNOWLEDGE_ALLOW_LOOPBACK (and the webhook flag behind it) still allows every loopback origin', async () => {
    location = `${other.origin}/x`;
    const page = await guardedFetch(`${allowed.origin}/bounce`, opts({ allowLoopback: true, allowOrigins: [] }));
    assert.equal(page.body.toString(), 'other');
    other.hits = 0;
  });

  it('KNOWLEDGE_FETCH_ALLOW_ORIGINS takes canonical origins only', () => {
    const parse = (v: string | undefined) => parseOrigins('KNOWLEDGE_FETCH_ALLOW_ORIGINS', v);
    assert.deepEqual(parse(undefined), []);
    assert.deepEqual(parse(' '), []);
    assert.deepEqual(parse('http://127.0.0.1:8080, http://localhost:3000/'), ['http://127.0.0.1:8080', 'http://localhost:3000']);
    for (const bad of [
      '127.0.0.1:8080',
      'http://127.0.0.1:8080/path',
      'http://127.1:8080',
      'http://127.0.0.1:80',
      'nonsense',
      'http://u@127.0.0.1:1',
    ]) {
      assert.throws(() => parse(bad), /KNOWLEDGE_FETCH_ALLOW_ORIGINS/, bad);
    }
  });

  it('onAllowedOrigin compares the origin as written', () => {
    const at = (raw: string, base?: string) => onAllowedOrigin(raw, new URL(raw, base), ['http://127.0.0.1:8080']);
    assert.equal(at('http://127.0.0.1:8080'), true);
    assert.equal(at('HTTP://127.0.0.1:8080/a?b#c'), true);
    assert.equal(at(' \thttp://127.0.0.1:8080/a\n'), true);
    assert.equal(at('/a', 'http://127.0.0.1:8080/'), true);
    assert.equal(at('a/b', 'http://127.0.0.1:8080/'), true);
    assert.equal(at('/a', 'http://127.0.0.1:8081/'), false);
    assert.equal(at('http://127.1:8080/'), false);
    assert.equal(at('http://127.0.0.1:08080/'), false);
    assert.equal(at('http:127.0.0.1:8080/'), false);
    assert.equal(at('//127.0.0.1:8080/a', 'http://example.com/'), true);
    assert.equal(at('//127.000.0.1:8080/a', 'http://example.com/'), false);
    assert.equal(onAllowedOrigin('http://127.0.0.1:8080/', new URL('http://127.0.0.1:8080/'), []), false);
  });
});
