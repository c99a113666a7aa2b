/**
 * Callback and webhook target URLs (spec 2.4, 2.5). The service will later make requests to these
 * URLs from inside the provider's network, so a URL is also an attack on that network
 * (server-side request forgery). Rules:
 *
 * - absolute `http:` or `https:` only, at most 2048 characters, no spaces or control characters;
 * - no credentials (`user:pass@`): they would be logged and sent to a third party;
 * - the host must be public: loopback, private, shared (CGNAT), link-local, unspecified,
 *   multicast, documentation, reserved and cloud metadata addresses are refused, and so are
 *   `localhost`, single-label names and the private-use suffixes `.localhost`, `.local`,
 *   `.internal`, `.home.arpa`, unless the options allow them.
 *
 * The WHATWG URL parser runs first and turns the obfuscated IPv4 forms (`2130706433`, `0177.0.0.1`,
 * `0x7f.1`, `127.1`) into dotted decimal and IPv6 into its compressed form, so the checks below see
 * one spelling per address. The normalised `href` is what the caller gets back and should call:
 * what was checked is what is called.
 *
 * Pure code cannot see DNS: a public name that resolves to a private address (DNS rebinding,
 * `127.0.0.1.nip.io`) must be refused by the host at connection time, on the resolved address.
 */
import type { FieldCheck } from './check.js';
import { MAX_URL_LENGTH } from './limits.js';

/** What a URL may point at. */
export interface UrlPolicy {
  /**
   * Accept hosts that are loopback, private, link-local or otherwise not public (metadata
   * addresses stay refused unless listed in `allowedHosts`). For development and tests only.
   * @default false
   */
  readonly allowPrivateHosts?: boolean;
  /**
   * Host names or addresses (lower case, as the URL parser writes them, e.g. `receiver.test`,
   * `127.0.0.1`, `[::1]`) accepted whatever they are.
   * @default []
   */
  readonly allowedHosts?: readonly string[];
}

/** Why a host is not public. */
export type HostClass = 'public' | 'loopback' | 'private' | 'shared' | 'link-local' | 'unspecified' | 'multicast' | 'documentation' | 'reserved' | 'metadata' | 'local-name';

/** Cloud metadata endpoints (AWS, GCP, Azure, Alibaba, Oracle): refused even with allowPrivateHosts. */
const METADATA_HOSTS = new Set([
  '169.254.169.254',
  '169.254.170.2',
  '168.63.129.16',
  '100.100.100.200',
  '192.0.0.192',
  '[fd00:ec2::254]',
  'metadata',
  'metadata.google.internal',
  'instance-data',
  'instance-data.ec2.internal',
]);

const LOCAL_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa', '.localdomain'];

type V4Range = readonly [base: number, bits: number, cls: HostClass];
const V4_RANGES: readonly V4Range[] = [
  [ip4(0, 0, 0, 0), 8, 'unspecified'],
  [ip4(10, 0, 0, 0), 8, 'private'],
  [ip4(100, 64, 0, 0), 10, 'shared'],
  [ip4(127, 0, 0, 0), 8, 'loopback'],
  [ip4(169, 254, 0, 0), 16, 'link-local'],
  [ip4(172, 16, 0, 0), 12, 'private'],
  [ip4(192, 0, 0, 0), 24, 'reserved'],
  [ip4(192, 0, 2, 0), 24, 'documentation'],
  [ip4(192, 88, 99, 0), 24, 'reserved'],
  [ip4(192, 168, 0, 0), 16, 'private'],
  [ip4(198, 18, 0, 0), 15, 'reserved'],
  [ip4(198, 51, 100, 0), 24, 'documentation'],
  [ip4(203, 0, 113, 0), 24, 'documentation'],
  [ip4(224, 0, 0, 0), 4, 'multicast'],
  [ip4(240, 0, 0, 0), 4, 'reserved'],
];

function ip4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

/** Classifies a dotted-decimal IPv4 address given as a 32-bit number. */
/** Cloud metadata services' IPv4 addresses, as numbers: found however an address embeds them. */
const METADATA_V4: ReadonlySet<number> = new Set([...METADATA_HOSTS].map((h) => parseV4(h)).filter((n): n is number => n !== undefined));

function classifyV4(address: number): HostClass {
  if (METADATA_V4.has(address)) return 'metadata';
  for (const [base, bits, cls] of V4_RANGES) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((address & mask) >>> 0 === base) return cls;
  }
  return 'public';
}

function parseV4(host: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (m === null) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ip4(parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0, parts[3] ?? 0);
}

/** Parses the WHATWG-serialised IPv6 (hex groups, `::` once, no dotted tail) into 8 groups. */
function parseV6(host: string): number[] | undefined {
  const halves = host.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] === '' || halves[0] === undefined ? [] : halves[0].split(':');
  const tail = halves.length === 2 && halves[1] !== '' && halves[1] !== undefined ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail].map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? Number.parseInt(g, 16) : Number.NaN));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g)) ? groups : undefined;
}

/**
 * IPv6 ranges by their first two groups (as one 32-bit number) under a mask, checked in order
 * after the addresses that embed an IPv4 one; what none holds is public only in 2000::/3, the
 * global unicast space.
 */
const V6_RANGES: readonly (readonly [base: number, mask: number, cls: HostClass])[] = [
  [0xfc000000, 0xfe000000, 'private'], // fc00::/7 unique local
  [0xfe800000, 0xffc00000, 'link-local'],
  [0xfec00000, 0xffc00000, 'private'], // deprecated site-local
  [0xff000000, 0xff000000, 'multicast'],
  [0x20010db8, 0xffffffff, 'documentation'],
  [0x20010000, 0xffffffff, 'reserved'], // Teredo hides an IPv4 address
];

/** Whether groups `from` to `to - 1` are all zero. */
function zeros(g: readonly number[], from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (g[i] !== 0) return false;
  return true;
}

/** The IPv4 address an IPv6 one reaches: IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::a.b.c.d) or 6to4 (2002:ab:cd::); undefined for others. */
function embeddedV4(g: readonly number[]): number | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, , , g5 = 0, g6 = 0, g7 = 0] = g;
  if ((zeros(g, 0, 5) && g5 === 0xffff) || (g0 === 0x64 && g1 === 0xff9b && zeros(g, 2, 6))) return ((g6 << 16) | g7) >>> 0;
  if (g0 === 0x2002) return ((g1 << 16) | g2) >>> 0;
  return undefined;
}

function classifyV6(g: readonly number[]): HostClass {
  if (zeros(g, 0, 7) && g[7] === 0) return 'unspecified';
  if (zeros(g, 0, 7) && g[7] === 1) return 'loopback';
  const v4 = embeddedV4(g);
  if (v4 !== undefined) return classifyV4(v4);
  const head = (((g[0] ?? 0) << 16) | (g[1] ?? 0)) >>> 0;
  for (const [base, mask, cls] of V6_RANGES) if ((head & mask) >>> 0 === base) return cls;
  return head >>> 29 === 1 ? 'public' : 'reserved';
}

/**
 * Classifies a host as the WHATWG URL parser writes it (`hostname`): an IPv4 in dotted decimal, an
 * IPv6 in brackets, or a lower-case name.
 */
export function classifyHost(hostname: string): HostClass {
  // Trailing dots name the same host (`localhost..` is `localhost`).
  const host = hostname.replace(/\.+$/, '');
  if (METADATA_HOSTS.has(host)) return 'metadata';
  if (host.startsWith('[') && host.endsWith(']')) {
    const groups = parseV6(host.slice(1, -1));
    return groups === undefined ? 'reserved' : classifyV6(groups);
  }
  const v4 = parseV4(host);
  if (v4 !== undefined) return classifyV4(v4);
  if (host === 'localhost' || LOCAL_SUFFIXES.some((s) => host.endsWith(s))) return 'local-name';
  // A name without a dot is completed by the resolver's search domains: an internal host.
  if (!host.includes('.')) return 'local-name';
  return 'public';
}

// Control characters are what this pattern is for: a URL holding one is refused.
// eslint-disable-next-line no-control-regex
const CONTROL_OR_SPACE = /[\u0000-\u0020\u007f-\u009f]/;

/**
 * Checks a callback or webhook URL and returns its normalised form (`new URL(text).href`).
 */
export function checkUrl(text: string, policy: UrlPolicy = {}): FieldCheck<string> {
  if (text.length > MAX_URL_LENGTH) return { ok: false, expected: `a URL of at most ${MAX_URL_LENGTH} characters` };
  if (CONTROL_OR_SPACE.test(text)) return { ok: false, expected: 'a URL without spaces or control characters' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, expected: 'an absolute http or https URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, expected: `an http or https URL, not ${url.protocol.slice(0, -1)}` };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, expected: 'a URL without credentials (user:password@)' };
  const host = url.hostname;
  if (host === '') return { ok: false, expected: 'an absolute http or https URL with a host' };
  if (policy.allowedHosts?.includes(host) === true) return { ok: true, value: url.href };
  const cls = classifyHost(host);
  if (cls === 'public' || (policy.allowPrivateHosts === true && cls !== 'metadata')) return { ok: true, value: url.href };
  return { ok: false, expected: `a URL whose host is public (${host} is ${cls === 'local-name' ? 'a local name' : `${/^[aeiou]/.test(cls) ? 'an' : 'a'} ${cls} address`})` };
}
