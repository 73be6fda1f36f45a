import assert from 'node:assert/strict';
import { webhookOptionsFromConfig } from '../../activities/webhooks';
import { config } from '../../lib/config';
import { sendWebhook, type ResolvedAddress, type Resolver } from '../../lib/webhooks/send';
import { signatureHeader } from '../../lib/webhooks/signature';
import { answer, receiver, type Receiver } from './support';
import { verifyWebhookSignature } from '../../sim/webhooks/verifier';

// One attempt over real sockets to real node:http receivers on 127.0.0.1 (spec 6 rules 1-3 and
// the SSRF policy of ARCHITECTURE.md). The loopback allowance is passed explicitly in each
// case; the suite-wide WEBHOOK_ALLOW_LOOPBACK does not reach sendWebhook.

const body = JSON.stringify({ id: 'evt_test', type: 'post.updated', data: { n: 1 } });
const headers = { 'Content-Type': 'application/json' };

function resolverOf(...answers: ResolvedAddress[][]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const fn = (async (host: string) => {
    calls.push(host);
    return answers[Math.min(calls.length - 1, answers.length - 1)]!;
  }) as Resolver & { calls: string[] };
  fn.calls = calls;
  return fn;
}
const v4 = (address: string): ResolvedAddress[] => [{ address, family: 4 }];
const v6 = (address: string): ResolvedAddress[] => [{ address, family: 6 }];

describe('webhook attempt over HTTP (lib/webhooks/send)', function () {
  this.timeout(30_000);
  let rx: Receiver;
  beforeEach(async () => {
    rx = await receiver();
  });
  afterEach(async () => {
    await rx.close();
  });

  const open = { timeoutMs: 2_000, allowLoopback: true, resolve: resolverOf(v4('127.0.0.1')) };
  const closed = { timeoutMs: 2_000, allowLoopback: false };

  it('delivers to a 2xx receiver and reports status, latency and the address used', async () => {
    const r = await sendWebhook(rx.url, body, headers, open);
    assert.equal(r.outcome, 'delivered');
    assert.equal(r.statusCode, 200);
    assert.equal(r.remoteAddress, '127.0.0.1');
    assert.ok(r.durationMs >= 0 && r.durationMs < 2_000);
    assert.equal(rx.received.length, 1);
    assert.equal(rx.received[0]!.body, body);
  });

  it('signs so that an independent verifier accepts the body and rejects tampering', async () => {
    const secret = 'whsec_independentVerifierCheck0123456789abcd';
    const t = Math.floor(Date.now() / 1000);
    const header = signatureHeader([secret], t, body);
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.deepEqual(verifyWebhookSignature(body, header, secret), { ok: true, timestamp: t });
    assert.equal(verifyWebhookSignature(body.replace('"n":1', '"n":2'), header, secret).ok, false);
    assert.equal(verifyWebhookSignature(body, header, `${secret}x`).ok, false);
    assert.equal(verifyWebhookSignature(body, header.replace(`t=${t}`, `t=${t + 1}`), secret).ok, false);
    assert.deepEqual(verifyWebhookSignature(body, signatureHeader([secret], t - 3600, body), secret), {
      ok: false,
      reason: 'timestamp outside tolerance',
    });
    // A rotation overlap signs with both secrets; either verifies.
    const both = signatureHeader(['whsec_new', 'whsec_old'], t, body);
    assert.equal(both.split(',').length, 3);
    assert.equal(verifyWebhookSignature(body, both, 'whsec_new').ok, true);
    assert.equal(verifyWebhookSignature(body, both, 'whsec_old').ok, true);
  });

  it('counts a non-2xx answer as failed and never follows a redirect', async () => {
    const target = await receiver();
    try {
      rx.behave((_req, res) => {
        res.writeHead(302, { Location: target.url }).end();
      });
      const r = await sendWebhook(rx.url, body, headers, open);
      assert.equal(r.outcome, 'failed');
      assert.equal(r.statusCode, 302);
      assert.match(r.error!, /^redirect_not_followed/);
      assert.equal(target.received.length, 0);
      rx.behave(answer(500));
      const r2 = await sendWebhook(rx.url, body, headers, open);
      assert.equal(r2.outcome, 'failed');
      assert.equal(r2.error, 'http_status: HTTP 500');
    } finally {
      await target.close();
    }
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    rx.behave(() => {
      /* never answers */
    });
    const r = await sendWebhook(rx.url, body, headers, { ...open, timeoutMs: 1_000 });
    assert.equal(r.outcome, 'failed');
    assert.match(r.error!, /^timeout/);
    assert.ok(r.durationMs >= 950 && r.durationMs < 2_000, String(r.durationMs));
  });

  it('uses the spec default of 10 s against a hanging receiver (spec 6 rule 2)', async function () {
    this.timeout(20_000);
    const defaults = webhookOptionsFromConfig();
    assert.equal(defaults.timeoutMs, 10_000);
    assert.equal(config.webhooks.timeoutMs, 10_000);
    rx.behave(() => {
      /* never answers */
    });
    const r = await sendWebhook(rx.url, body, headers, { ...open, timeoutMs: defaults.timeoutMs });
    assert.equal(r.outcome, 'failed');
    assert.match(r.error!, /^timeout: no response within 10000 ms/);
    assert.ok(r.durationMs >= 9_900 && r.durationMs < 11_000, String(r.durationMs));
  });

  it('counts a DNS failure as a refused attempt', async () => {
    const failing: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    const r = await sendWebhook('https://no-such-host.example/hook', body, headers, { ...closed, resolve: failing });
    assert.equal(r.outcome, 'refused');
    assert.match(r.error!, /^dns_failed: no-such-host\.example did not resolve \(ENOTFOUND\)/);
  });

  describe('address policy with the loopback allowance off', () => {
    const classes: Array<[string, ResolvedAddress[], string]> = [
      ['loopback', v4('127.0.0.1'), 'loopback'],
      ['IPv6 loopback', v6('::1'), 'loopback'],
      ['mapped loopback', v6('::ffff:127.0.0.1'), 'loopback'],
      ['unspecified', v4('0.0.0.0'), 'unspecified'],
      ['private 10/8', v4('10.0.0.8'), 'private'],
      ['private 172.16/12', v4('172.20.1.1'), 'private'],
      ['private 192.168/16', v4('192.168.0.10'), 'private'],
      ['CGNAT', v4('100.64.3.4'), 'cgnat'],
      ['link-local', v4('169.254.10.10'), 'link_local'],
      ['cloud metadata', v4('169.254.169.254'), 'metadata'],
      ['mapped metadata', v6('::ffff:169.254.169.254'), 'metadata'],
      ['unique local fd00::/8', v6('fd12:3456::1'), 'unique_local'],
      ['IPv6 link-local', v6('fe80::abcd'), 'link_local'],
      ['multicast', v4('239.1.1.1'), 'multicast'],
    ];
    for (const [label, answerOf, cls] of classes) {
      it(`refuses a host resolving to a ${label} address`, async () => {
        const resolve = resolverOf(answerOf);
        const r = await sendWebhook(`http://receiver.example:${rx.port}/hooks`, body, headers, { ...closed, resolve });
        assert.equal(r.outcome, 'refused');
        assert.match(r.error!, new RegExp(`^address_refused: receiver\\.example resolves to .*, a ${cls} address$`));
        assert.equal(r.remoteAddress, null);
        assert.equal(rx.received.length, 0, 'nothing reached the receiver');
      });
    }

    it('refuses literal addresses in the URL without resolving', async () => {
      const resolve = resolverOf(v4('8.8.8.8'));
      for (const url of [
        `http://127.0.0.1:${rx.port}/hooks`,
        `http://[::ffff:127.0.0.1]:${rx.port}/hooks`,
        'http://169.254.169.254/latest/meta-data',
        'http://[fd00::1]/',
        'http://0.0.0.0/',
      ]) {
        const r = await sendWebhook(url, body, headers, { ...closed, resolve });
        assert.equal(r.outcome, 'refused', url);
        assert.match(r.error!, /^address_refused/);
      }
      assert.equal(resolve.calls.length, 0);
      assert.equal(rx.received.length, 0);
    });

    it('refuses when every answer is refused, and connects only to an allowed one', async () => {
      const r = await sendWebhook(`http://multi.example:${rx.port}/hooks`, body, headers, {
        ...closed,
        resolve: resolverOf([...v4('10.0.0.1'), ...v6('fe80::1')]),
      });
      assert.equal(r.outcome, 'refused');
      // With loopback allowed, the one allowed answer among refused ones is the one used.
      const mixed = await sendWebhook(`http://multi.example:${rx.port}/hooks`, body, headers, {
        ...open,
        resolve: resolverOf([...v4('169.254.169.254'), ...v4('127.0.0.1')]),
      });
      assert.equal(mixed.outcome, 'delivered');
      assert.equal(mixed.remoteAddress, '127.0.0.1');
    });
  });

  it('connects to the checked address even when DNS answers differently afterwards (rebinding)', async () => {
    // First answer: the address that passes the check (the receiver); any later answer: metadata.
    // The socket's own lookup is pinned, so there is no second resolution to exploit: the
    // resolver runs once, and the request lands on the checked address.
    const resolve = resolverOf(v4('127.0.0.1'), v4('169.254.169.254'));
    const r = await sendWebhook(`http://rebind.example:${rx.port}/hooks`, body, headers, { ...open, resolve });
    assert.equal(r.outcome, 'delivered');
    assert.equal(r.remoteAddress, '127.0.0.1');
    assert.deepEqual(resolve.calls, ['rebind.example']);
    assert.equal(rx.received.length, 1);
    assert.equal(rx.received[0]!.headers.host, `rebind.example:${rx.port}`, 'Host names the configured host, not the address');
    // The next attempt resolves again, sees the metadata address, and is refused.
    const again = await sendWebhook(`http://rebind.example:${rx.port}/hooks`, body, headers, { ...open, resolve });
    assert.equal(again.outcome, 'refused');
    assert.match(again.error!, /metadata address/);
    assert.equal(rx.received.length, 1);
  });
});
