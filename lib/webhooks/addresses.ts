import ipaddr from 'ipaddr.js';

const { IPv4, IPv6, subnetMatch } = ipaddr;
type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

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

type Table<T extends IPv4 | IPv6> = Partial<Record<AddressClass, Array<[T, number]>>>;

const cidrs = <T extends IPv4 | IPv6>(parse: (cidr: string) => [T, number], table: Partial<Record<AddressClass, string[]>>): Table<T> =>
  Object.fromEntries(Object.entries(table).map(([cls, list]) => [cls, list.map(parse)]));

// Most specific class first (subnetMatch answers the first class with a matching range), so
// 169.254.169.254 is metadata before link_local and 255.255.255.255 broadcast before reserved.
// Sources: RFC 6890 special-purpose registries, RFC 6598 (shared address space), cloud
// instance-metadata addresses.
const V4 = cidrs((c) => IPv4.parseCIDR(c), {
  metadata: [
    '169.254.169.254/32', // AWS, GCP, Azure, OpenStack instance metadata
    '169.254.170.2/32', // AWS ECS task metadata
    '100.100.100.200/32', // Alibaba Cloud metadata
    '192.0.0.192/32', // Oracle Cloud metadata
  ],
  broadcast: ['255.255.255.255/32'],
  unspecified: ['0.0.0.0/8'], // "this network"; 0.0.0.0 reaches the local host on Linux
  loopback: ['127.0.0.0/8'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'],
  cgnat: ['100.64.0.0/10'],
  link_local: ['169.254.0.0/16'],
  documentation: ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24'],
  benchmarking: ['198.18.0.0/15'],
  multicast: ['224.0.0.0/4'],
  reserved: [
    '192.0.0.0/24', // IETF protocol assignments
    '192.88.99.0/24', // 6to4 relay anycast
    '240.0.0.0/4',
  ],
});

const V6 = cidrs((c) => IPv6.parseCIDR(c), {
  metadata: ['fd00:ec2::254/128'], // AWS instance metadata over IPv6
  unspecified: ['::/128'],
  loopback: ['::1/128'],
  private: ['64:ff9b:1::/48'], // local-use NAT64 (RFC 8215)
  documentation: ['2001:db8::/32'],
  unique_local: ['fc00::/7'], // includes fd00::/8
  link_local: ['fe80::/10'],
  multicast: ['ff00::/8'],
  reserved: [
    '100::/64', // discard-only
    '2001::/23', // IETF protocol assignments, including Teredo 2001::/32
    'fec0::/10', // deprecated site-local
  ],
});

// Prefixes whose addresses lead to an embedded IPv4 address: NAT64 well-known prefix
// 64:ff9b::/96 (RFC 6052) and 6to4 2002::/16 (RFC 3056).
const NAT64 = IPv6.parseCIDR('64:ff9b::/96');
const SIX_TO_FOUR = IPv6.parseCIDR('2002::/16');
const COMPATIBLE = IPv6.parseCIDR('::/96'); // deprecated IPv4-compatible ::a.b.c.d
// Only 2000::/3 is allocated as global unicast.
const GLOBAL_UNICAST = IPv6.parseCIDR('2000::/3');

const v4FromBytes = (bytes: number[]) => new IPv4(bytes);

function classifyV4(addr: IPv4): AddressClass {
  return subnetMatch(addr, V4, 'public') as AddressClass;
}

function classifyV6(addr: IPv6): AddressClass {
  const bytes = addr.toByteArray();
  // ::ffff:a.b.c.d (mapped): the socket goes to IPv4.
  if (addr.isIPv4MappedAddress()) return classifyV4(addr.toIPv4Address());
  if (addr.match(COMPATIBLE) && addr.range() !== 'unspecified' && addr.range() !== 'loopback') {
    // Deprecated and unroutable even when the embedded address is public.
    const inner = classifyV4(v4FromBytes(bytes.slice(12)));
    return inner === 'public' ? 'reserved' : inner;
  }
  if (addr.match(NAT64)) return classifyV4(v4FromBytes(bytes.slice(12)));
  if (addr.match(SIX_TO_FOUR)) return classifyV4(v4FromBytes(bytes.slice(2, 6)));
  const cls = subnetMatch(addr, V6, 'unlisted') as AddressClass | 'unlisted';
  if (cls !== 'unlisted') return cls;
  return addr.match(GLOBAL_UNICAST) ? 'public' : 'reserved';
}

/**
 * An IPv6 literal with its trailing dotted quad spelled as two hex groups. RFC 4291 2.2: the quad
 * is the low 32 bits wherever it stands, but ipaddr.js reads any ::a.b.c.d as IPv4-mapped
 * (::8.8.8.8 as ::ffff:8.8.8.8), which would judge the deprecated compatible form by its
 * embedded address. null when the quad itself is malformed.
 */
function hexTail(text: string): string | null {
  const [address, zone] = text.split('%', 2) as [string, string | undefined];
  const quad = /^(.*:)([^:]*\.[^:]*)$/.exec(address);
  if (!quad) return text;
  if (!IPv4.isValidFourPartDecimal(quad[2]!)) return null;
  const [a, b, c, d] = IPv4.parse(quad[2]!).octets as [number, number, number, number];
  const hex = `${quad[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  return zone === undefined ? hex : `${hex}%${zone}`;
}

/** The class of an IPv4 or IPv6 literal (brackets and zone ids tolerated). */
export function classifyAddress(address: string): AddressClass {
  const bare = address.replace(/^\[|\]$/g, '');
  // Only the dotted-quad spelling is an address here: inet_aton forms (0x7f.1, 2130706433) are
  // refused as invalid rather than guessed at.
  if (IPv4.isValidFourPartDecimal(bare)) return classifyV4(IPv4.parse(bare));
  if (!bare.includes(':')) return 'invalid';
  const v6 = hexTail(bare);
  if (v6 !== null && IPv6.isValid(v6)) return classifyV6(IPv6.parse(v6));
  return 'invalid';
}

export interface AddressPolicy {
  allowLoopback: boolean;
}

/** null when a delivery may connect to `address`, else the class that forbids it. */
export function refusedClass(address: string, policy: AddressPolicy): AddressClass | null {
  const cls = classifyAddress(address);
  if (cls === 'public') return null;
  if (cls === 'loopback' && policy.allowLoopback) return null;
  return cls;
}
