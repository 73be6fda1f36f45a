import { isIP } from 'node:net';

// Which IP addresses a webhook may be delivered to (ARCHITECTURE.md "The outside world": outbound
// fetches to user-given URLs refuse private, loopback, link-local and metadata addresses).
// Only globally routable unicast is allowed; loopback only under explicit configuration (tests,
// local development). Addresses that carry an IPv4 address inside IPv6 (mapped, compatible,
// NAT64, 6to4) are judged by the IPv4 address they lead to.

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'unique_local'
  | 'link_local'
  | 'metadata'
  | 'unspecified'
  | 'cgnat'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved'
  | 'invalid';

interface Range { bytes: number[]; bits: number; cls: AddressClass }

function cidr4(text: string, cls: AddressClass): Range {
  const [addr, bits] = text.split('/');
  return { bytes: parseIPv4(addr!)!, bits: Number(bits), cls };
}
function cidr6(text: string, cls: AddressClass): Range {
  const [addr, bits] = text.split('/');
  return { bytes: parseIPv6(addr!)!, bits: Number(bits), cls };
}

// Most specific first: the first match wins. Sources: RFC 6890 special-purpose registries,
// RFC 6598 (shared address space), cloud instance-metadata addresses.
const V4: Range[] = [
  cidr4('169.254.169.254/32', 'metadata'), // AWS, GCP, Azure, OpenStack instance metadata
  cidr4('169.254.170.2/32', 'metadata'), // AWS ECS task metadata
  cidr4('100.100.100.200/32', 'metadata'), // Alibaba Cloud metadata
  cidr4('192.0.0.192/32', 'metadata'), // Oracle Cloud metadata
  cidr4('255.255.255.255/32', 'broadcast'),
  cidr4('0.0.0.0/8', 'unspecified'), // "this network"; 0.0.0.0 reaches the local host on Linux
  cidr4('10.0.0.0/8', 'private'),
  cidr4('100.64.0.0/10', 'cgnat'),
  cidr4('127.0.0.0/8', 'loopback'),
  cidr4('169.254.0.0/16', 'link_local'),
  cidr4('172.16.0.0/12', 'private'),
  cidr4('192.0.0.0/24', 'reserved'), // IETF protocol assignments
  cidr4('192.0.2.0/24', 'documentation'),
  cidr4('192.88.99.0/24', 'reserved'), // 6to4 relay anycast
  cidr4('192.168.0.0/16', 'private'),
  cidr4('198.18.0.0/15', 'benchmarking'),
  cidr4('198.51.100.0/24', 'documentation'),
  cidr4('203.0.113.0/24', 'documentation'),
  cidr4('224.0.0.0/4', 'multicast'),
  cidr4('240.0.0.0/4', 'reserved'),
];

const V6: Range[] = [
  cidr6('::/128', 'unspecified'),
  cidr6('::1/128', 'loopback'),
  cidr6('fd00:ec2::254/128', 'metadata'), // AWS instance metadata over IPv6
  cidr6('64:ff9b:1::/48', 'private'), // local-use NAT64 (RFC 8215)
  cidr6('100::/64', 'reserved'), // discard-only
  cidr6('2001:db8::/32', 'documentation'),
  cidr6('2001::/23', 'reserved'), // IETF protocol assignments, including Teredo 2001::/32
  cidr6('fc00::/7', 'unique_local'), // includes fd00::/8
  cidr6('fe80::/10', 'link_local'),
  cidr6('fec0::/10', 'reserved'), // deprecated site-local
  cidr6('ff00::/8', 'multicast'),
];

function parseIPv4(s: string): number[] | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out.push(n);
  }
  return out;
}

function parseIPv6(input: string): number[] | null {
  let s = input.replace(/^\[|\]$/g, '');
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  let tail: number[] = [];
  // A trailing dotted quad (::ffff:1.2.3.4) stands for the last 32 bits.
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (!v4) return null;
    tail = v4;
    s = `${s.slice(0, lastColon + 1)}0:0`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  const bytes: number[] = [];
  for (const g of all) {
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return null;
    const n = parseInt(g, 16);
    bytes.push(n >> 8, n & 0xff);
  }
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

function inRange(bytes: number[], r: Range): boolean {
  let bits = r.bits;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i]! & mask) !== (r.bytes[i]! & mask)) return false;
  }
  return true;
}

function classifyV4(b: number[]): AddressClass {
  return V4.find((r) => inRange(b, r))?.cls ?? 'public';
}

const zeros = (b: number[], from: number, to: number) => b.slice(from, to).every((x) => x === 0);

function classifyV6(b: number[]): AddressClass {
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (deprecated compatible form): the socket goes to IPv4.
  if (zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return classifyV4(b.slice(12));
  if (zeros(b, 0, 12) && !zeros(b, 12, 16) && !(zeros(b, 12, 15) && b[15] === 1)) {
    // Deprecated and unroutable even when the embedded address is public.
    const inner = classifyV4(b.slice(12));
    return inner === 'public' ? 'reserved' : inner;
  }
  // NAT64 well-known prefix 64:ff9b::/96 and 6to4 2002::/16 lead to the embedded IPv4 address.
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(b, 4, 12)) return classifyV4(b.slice(12));
  if (b[0] === 0x20 && b[1] === 0x02) return classifyV4(b.slice(2, 6));
  const hit = V6.find((r) => inRange(b, r));
  if (hit) return hit.cls;
  // Only 2000::/3 is allocated as global unicast.
  return (b[0]! & 0xe0) === 0x20 ? 'public' : 'reserved';
}

/** The class of an IPv4 or IPv6 literal (brackets and zone ids tolerated). */
export function classifyAddress(address: string): AddressClass {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare.split('%')[0]!);
  if (family === 4) return classifyV4(parseIPv4(bare)!);
  if (family === 6) {
    const b = parseIPv6(bare);
    return b ? classifyV6(b) : 'invalid';
  }
  return 'invalid';
}

export interface AddressPolicy { allowLoopback: boolean }

/** null when a delivery may connect to `address`, else the class that forbids it. */
export function refusedClass(address: string, policy: AddressPolicy): AddressClass | null {
  const cls = classifyAddress(address);
  if (cls === 'public') return null;
  if (cls === 'loopback' && policy.allowLoopback) return null;
  return cls;
}
