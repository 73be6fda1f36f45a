import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { sendWebhook, type ResolvedAddress, type Resolver } from '../../lib/webhooks/send';
import { startOAuthApi } from '../oauth/support';
import { workspaceWithKey } from '../support/factories';
import { oauthToken } from '../oauth/support';
import { answer, receiver, type Receiver } from '../webhooks/support';
import { workspaceRows } from './fuzzing';

// SSRF (ARCHITECTURE.md "The outside world"; spec 6): every user-given URL (webhook receivers
// today) is refused when it leads to private, loopback, link-local, metadata or otherwise
// non-public space, whatever the spelling: at write time through the API (nothing stored), and
// at every delivery attempt (nothing reaches the target, which here is a real receiver on
// 127.0.0.1 that records every request). Loopback is closed for the whole suite.

/** Spellings of a non-public target; `{port}` is the receiver's. */
const HOSTILE: [string, string][] = [
  ['loopback', 'http://127.0.0.1:{port}/hooks'],
  ['loopback, short form', 'http://127.1:{port}/hooks'],
  ['loopback, decimal', 'http://2130706433:{port}/hooks'],
  ['loopback, hex', 'http://0x7f000001:{port}/hooks'],
  ['loopback, dotted hex', 'http://0x7f.0x0.0x0.0x1:{port}/hooks'],
  ['loopback, octal', 'http://0177.0.0.1:{port}/hooks'],
  ['loopback, mixed radix', 'http://0x7f.1:{port}/hooks'],
  ['loopback, IPv6', 'http://[::1]:{port}/hooks'],
  ['loopback, IPv4-mapped IPv6', 'http://[::ffff:127.0.0.1]:{port}/hooks'],
  ['loopback, IPv4-mapped IPv6 in hex', 'http://[::ffff:7f00:1]:{port}/hooks'],
  ['loopback, IPv4-compatible IPv6', 'http://[::127.0.0.1]:{port}/hooks'],
  ['loopback, full-width digits', 'http://１２７.０.０.１:{port}/hooks'],
  ['loopback, trailing dot', 'http://127.0.0.1.:{port}/hooks'],
  ['localhost', 'http://localhost:{port}/hooks'],
  ['localhost, upper case and trailing dot', 'http://LOCALHOST.:{port}/hooks'],
  ['a localhost subdomain', 'http://api.localhost:{port}/hooks'],
  ['unspecified', 'http://0.0.0.0:{port}/hooks'],
  ['unspecified, decimal', 'http://0:{port}/hooks'],
  ['unspecified, IPv6', 'http://[::]:{port}/hooks'],
  ['metadata', 'http://169.254.169.254/latest/meta-data/'],
  ['metadata, decimal', 'http://2852039166/latest/meta-data/'],
  ['metadata, hex', 'http://0xa9fea9fe/latest/meta-data/'],
  ['metadata, octal', 'http://0251.0376.0251.0376/latest/meta-data/'],
  ['metadata, IPv4-mapped IPv6', 'http://[::ffff:a9fe:a9fe]/latest/meta-data/'],
  ['metadata, NAT64', 'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/'],
  ['metadata, AWS IPv6', 'http://[fd00:ec2::254]/latest/meta-data/'],
  ['ECS task metadata', 'http://169.254.170.2/v2/credentials'],
  ['link-local', 'http://169.254.1.1/'],
  ['link-local IPv6', 'http://[fe80::1]/'],
  ['private 10/8', 'http://10.0.0.1/'],
  ['private 172.16/12', 'http://172.31.255.255/'],
  ['private 192.168/16', 'http://192.168.0.1/'],
  ['private, decimal', 'http://3232235521/'],
  ['private, 6to4', 'http://[2002:c0a8:101::1]/'],
  ['unique-local IPv6', 'http://[fd12:3456::1]/'],
  ['CGNAT', 'http://100.64.0.1/'],
  ['broadcast', 'http://255.255.255.255/'],
  ['multicast', 'http://224.0.0.1/'],
];

const v4 = (address: string): ResolvedAddress[] => [{ address, family: 4 }];
const fixed = (...answers: ResolvedAddress[][]): Resolver & { calls: number } => {
  const fn = (async () => answers[Math.min(fn.calls++, answers.length - 1)]!) as unknown as Resolver & { calls: number };
  fn.calls = 0;
  return fn;
};

describe('SSRF: user-given URLs never reach non-public space', function () {
  this.timeout(60_000);
  let rx: Receiver;
  let cases = 0;
  const previous = { ...config.webhooks };
  const previousLimits = { ...config.rateLimit };
  before(async () => {
    rx = await receiver();
    // Loopback closed (the suite-wide test setting opens it); plain http allowed so that the
    // address spellings, not the scheme, are what is refused.
    Object.assign(config.webhooks, { allowLoopback: false, allowHttp: true });
    Object.assign(config.rateLimit, { writePerWindow: 1_000_000, readPerWindow: 1_000_000 });
  });
  after(async () => {
    Object.assign(config.webhooks, previous);
    Object.assign(config.rateLimit, previousLimits);
    await rx.close();
    console.log(`      SSRF cases: ${cases}`);
  });
  const url = (u: string) => u.replace('{port}', String(rx.port));
  const closed = { timeoutMs: 2_000, allowLoopback: false };

  it(`refuses ${HOSTILE.length} non-public targets at write time through the API, storing nothing`, async () => {
    const api = await startOAuthApi();
    try {
      const ws = await workspaceWithKey();
      const token = await oauthToken(api.url, ws.workspace.id);
      const call = (method: string, path: string, body: unknown) =>
        fetch(api.url + path, {
          method,
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
      const created = await call('POST', '/v1/webhook-endpoints', { url: 'https://hooks.example.com/in', events: ['post.created'] });
      assert.equal(created.status, 200);
      const endpoint = ((await created.json()) as any).data;
      const before = await workspaceRows(ws.workspace.id);
      for (const [label, u] of HOSTILE) {
        for (const [method, path] of [
          ['POST', '/v1/webhook-endpoints'],
          ['PATCH', `/v1/webhook-endpoints/${endpoint.id}`],
        ] as const) {
          const res = await call(method, path, { url: url(u), ...(method === 'POST' ? { events: ['post.created'] } : {}) });
          const body = (await res.json()) as any;
          cases++;
          assert.equal(res.status, 422, `${label} ${method}: ${JSON.stringify(body)}`);
          assert.equal(body.error.code, 'unprocessable', label);
        }
      }
      assert.deepEqual(await workspaceRows(ws.workspace.id), before);
      const still = (await (
        await fetch(`${api.url}/v1/webhook-endpoints/${endpoint.id}`, { headers: { Authorization: `Bearer ${token}` } })
      ).json()) as any;
      assert.equal(still.data.url, 'https://hooks.example.com/in');
    } finally {
      api.restore();
      await api.close();
    }
  });

  it(`refuses ${HOSTILE.length} non-public targets at delivery time, sending nothing`, async () => {
    for (const [label, u] of HOSTILE) {
      // A name resolves to the receiver: the literal spellings never reach the resolver, names do.
      const r = await sendWebhook(url(u), '{}', {}, { ...closed, resolve: fixed(v4('127.0.0.1')) });
      cases++;
      assert.equal(r.outcome, 'refused', `${label}: ${r.outcome} ${r.error}`);
    }
    assert.equal(rx.received.length, 0, 'nothing reached the loopback receiver');
  });

  it('refuses names whose DNS answers are non-public, and any answer set with no public address', async () => {
    for (const answers of [
      v4('127.0.0.1'),
      v4('10.0.0.1'),
      v4('169.254.169.254'),
      [{ address: '::ffff:127.0.0.1', family: 6 as const }],
      [...v4('10.0.0.1'), ...v4('192.168.1.1')],
      [],
    ]) {
      const r = await sendWebhook(`http://attacker.example:${rx.port}/hooks`, '{}', {}, { ...closed, resolve: fixed(answers) });
      cases++;
      assert.equal(r.outcome, 'refused', JSON.stringify(answers));
    }
    assert.equal(rx.received.length, 0);
  });

  it('a DNS answer that changes between check and connect cannot move the request (the socket is pinned to the checked address)', async () => {
    // With loopback allowed only here (so that the receiver stands for the public address),
    // the first answer passes and is what the socket uses; the second (metadata) is never used.
    const resolve = fixed(v4('127.0.0.1'), v4('169.254.169.254'));
    const r = await sendWebhook(`http://rebind.example:${rx.port}/hooks`, '{}', {}, { timeoutMs: 2_000, allowLoopback: true, resolve });
    cases++;
    assert.equal(r.outcome, 'delivered', String(r.error));
    assert.equal(r.remoteAddress, '127.0.0.1');
    assert.equal(resolve.calls, 1, 'one resolution per attempt: nothing to rebind between check and connect');
    const next = await sendWebhook(`http://rebind.example:${rx.port}/hooks`, '{}', {}, { timeoutMs: 2_000, allowLoopback: true, resolve });
    cases++;
    assert.equal(next.outcome, 'refused', 'the next attempt checks again');
    assert.equal(rx.received.length, 1);
    rx.received.length = 0;
  });

  it('never follows a redirect into private space', async () => {
    const target = await receiver();
    try {
      for (const status of [301, 302, 303, 307, 308]) {
        for (const location of [
          `http://127.0.0.1:${target.port}/internal`,
          'http://169.254.169.254/latest/meta-data/',
          `http://[::ffff:7f00:1]:${target.port}/`,
        ]) {
          rx.behave((_req, res) => {
            res.writeHead(status, { Location: location }).end();
          });
          const r = await sendWebhook(rx.url, '{}', {}, { timeoutMs: 2_000, allowLoopback: true, resolve: fixed(v4('127.0.0.1')) });
          cases++;
          assert.equal(r.outcome, 'failed', `${status} → ${location}`);
          assert.match(r.error!, /redirect_not_followed/);
        }
      }
      assert.equal(target.received.length, 0, 'the redirect target was never contacted');
    } finally {
      rx.behave(answer(200));
      await target.close();
    }
  });
});
