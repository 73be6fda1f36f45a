import assert from 'node:assert/strict';
import { classifyAddress, refusedClass } from '../../lib/webhooks/addresses';
import { receiverUrlProblem } from '../../lib/webhooks/url';

// The address policy of webhook receivers (ARCHITECTURE.md "The outside world"), as pure rules.

describe('webhook address classifier', () => {
  const cases: Array<[string, string]> = [
    // IPv4
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.7', 'loopback'],
    ['169.254.0.1', 'link_local'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['192.0.0.192', 'metadata'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['100.128.0.1', 'public'],
    ['192.0.2.10', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    // IPv6
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf:ffff::1', 'link_local'],
    ['fd00::1', 'unique_local'],
    ['fc00::1', 'unique_local'],
    ['fd00:ec2::254', 'metadata'],
    ['ff02::1', 'multicast'],
    ['fec0::1', 'reserved'],
    ['2001:db8::1', 'documentation'],
    ['2001::1', 'reserved'], // Teredo
    ['2606:4700:4700::1111', 'public'],
    ['2a00:1450:4001:80b::200e', 'public'],
    ['4000::1', 'reserved'],
    // IPv4 inside IPv6: judged by where the socket really goes
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::ffff:8.8.8.8', 'public'],
    ['::127.0.0.1', 'loopback'],
    ['::8.8.8.8', 'reserved'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b::808:808', 'public'],
    ['64:ff9b:1::1', 'private'],
    ['2002:c0a8:0101::1', 'private'], // 6to4 of 192.168.1.1
    ['2002:0808:0808::1', 'public'],
    // edges of the ranges named in ARCHITECTURE.md "The outside world"
    ['0.0.0.1', 'unspecified'],
    ['0.255.255.255', 'unspecified'],
    ['1.0.0.0', 'public'],
    ['100.63.255.255', 'public'],
    ['100.64.0.0', 'cgnat'],
    ['169.254.169.253', 'link_local'],
    ['169.254.169.255', 'link_local'],
    ['fbff:ffff::1', 'reserved'], // just below fc00::/7, outside 2000::/3
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'unique_local'],
    ['fe00::1', 'reserved'], // just above fc00::/7
    ['fd00:ec2:0:0:0:0:0:254', 'metadata'],
    ['fd00:ec2::253', 'unique_local'],
    // IPv4-mapped IPv6 in every spelling
    ['::ffff:100.64.0.1', 'cgnat'],
    ['::ffff:6440:1', 'cgnat'],
    ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
    ['::FFFF:A9FE:A9FE', 'metadata'],
    ['[::ffff:169.254.169.254]', 'metadata'],
    ['::ffff:192.168.0.1', 'private'],
    ['::ffff:0:0', 'unspecified'],
    ['::ffff:fd00:1', 'reserved'], // 253.0.0.1 (240.0.0.0/4), not the unique-local fd00::1
    ['64:ff9b::169.254.169.254', 'metadata'],
    ['64:ff9b::100.64.0.1', 'cgnat'],
    ['::0.0.0.2', 'unspecified'],
    // not addresses
    ['example.com', 'invalid'],
    ['1.2.3', 'invalid'],
    ['2130706433', 'invalid'],
    ['0x7f.0.0.1', 'invalid'],
    ['010.0.0.1', 'invalid'],
    ['256.0.0.1', 'invalid'],
    ['::ffff:1.2.3', 'invalid'],
    ['::ffff:256.0.0.1', 'invalid'],
    ['1::2::3', 'invalid'],
    ['', 'invalid'],
  ];
  for (const [address, expected] of cases) {
    it(`${address} is ${expected}`, () => assert.equal(classifyAddress(address), expected));
  }

  it('allows public addresses, and loopback only when configured', () => {
    assert.equal(refusedClass('8.8.8.8', { allowLoopback: false }), null);
    assert.equal(refusedClass('127.0.0.1', { allowLoopback: false }), 'loopback');
    assert.equal(refusedClass('::1', { allowLoopback: false }), 'loopback');
    assert.equal(refusedClass('127.0.0.1', { allowLoopback: true }), null);
    assert.equal(refusedClass('::ffff:127.0.0.1', { allowLoopback: true }), null);
    // The loopback allowance never opens anything else.
    for (const a of ['10.0.0.1', '169.254.169.254', '0.0.0.0', 'fd00::1', 'fe80::1', '100.64.0.1']) {
      assert.notEqual(refusedClass(a, { allowLoopback: true }), null, a);
    }
  });
});

describe('webhook receiver URL checks at write time', () => {
  const strict = { allowHttp: false, allowLoopback: false };
  const dev = { allowHttp: true, allowLoopback: true };

  it('accepts an https URL on a public name or address', () => {
    assert.equal(receiverUrlProblem('https://hooks.example.com/in?x=1', strict), null);
    assert.equal(receiverUrlProblem('https://8.8.8.8:8443/x', strict), null);
  });

  it('refuses plain http unless configured, and other schemes always', () => {
    assert.match(receiverUrlProblem('http://hooks.example.com/', strict)!, /https/);
    assert.equal(receiverUrlProblem('http://hooks.example.com/', dev), null);
    assert.match(receiverUrlProblem('ftp://hooks.example.com/', dev)!, /https or http/);
    assert.match(receiverUrlProblem('not a url', dev)!, /absolute URL/);
  });

  it('refuses credentials, fragments and bare names', () => {
    assert.match(receiverUrlProblem('https://user:pw@hooks.example.com/', strict)!, /credentials/);
    assert.match(receiverUrlProblem('https://hooks.example.com/#x', strict)!, /fragment/);
    assert.match(receiverUrlProblem('https://intranet/', strict)!, /fully qualified/);
  });

  it('refuses literal addresses of every refused class, whatever their spelling', () => {
    for (const u of [
      'https://127.0.0.1/',
      'https://[::1]/',
      'https://169.254.169.254/latest',
      'https://[::ffff:169.254.169.254]/',
      'https://10.0.0.1/',
      'https://0.0.0.0/',
      'https://[fd00::1]/',
      'https://[fe80::1]/',
      'https://100.64.1.1/',
      'https://2130706433/',
      'https://0x7f.0.0.1/',
      'https://localhost/',
    ]) {
      assert.ok(receiverUrlProblem(u, strict), u);
    }
    assert.equal(receiverUrlProblem('http://127.0.0.1:4000/hook', dev), null);
    assert.ok(receiverUrlProblem('http://10.0.0.1/hook', dev), 'the loopback allowance opens loopback only');
  });
});
