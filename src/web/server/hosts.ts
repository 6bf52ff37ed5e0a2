/**
 * Which host names a request to the dashboard may address. A page on another site whose name
 * is made to resolve to this machine (DNS rebinding) sends its own name in the Host header;
 * such requests are refused. Allowed: loopback addresses (all of 127.0.0.0/8 and ::1) and
 * `localhost` names, the address the server is bound to (every address of this machine when it
 * is bound to all of them), and the names given with `--allowed-host`.
 */
import net from 'node:net';
import os from 'node:os';

const WILDCARD = new Set(['0.0.0.0', '::', '']);
const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** A host as compared: lower case, no brackets, no trailing dot, IPv4-mapped IPv6 as IPv4. */
function canonical(host: string): string {
  let h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  if (mapped) h = mapped[1]!;
  return h;
}

/** Whether an address or name is this machine's loopback: 127.0.0.0/8, ::1, localhost and *.localhost. */
export function isLoopback(host: string): boolean {
  const h = canonical(host);
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  const family = net.isIP(h);
  return family !== 0 && LOOPBACK.check(h, family === 6 ? 'ipv6' : 'ipv4');
}

/** The host of a Host header (`name:port`, `[v6]:port`, `name`), canonical. */
export function hostOfHeader(header: string): string {
  const h = header.trim();
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(h);
  if (bracketed) return canonical(bracketed[1]!);
  // A bare IPv6 address has colons of its own; anything else ends in an optional port.
  if (net.isIPv6(h)) return canonical(h);
  return canonical(h.replace(/:\d*$/, ''));
}

export class HostAllowList {
  private readonly names: Set<string>;

  constructor(
    /** The address the server is bound to. */
    readonly bind: string,
    extra: string[] = [],
  ) {
    this.names = new Set([bind, ...extra].map(canonical).filter((n) => !WILDCARD.has(n)));
  }

  /** The hosts allowed, in words. */
  describe(): string {
    const bound = WILDCARD.has(canonical(this.bind)) ? ["this machine's addresses"] : [];
    return [...bound, ...this.names, 'localhost and loopback addresses'].join(', ');
  }

  /** Whether a request carrying this Host header is answered. */
  allows(header: string): boolean {
    const host = hostOfHeader(header);
    if (!host) return false;
    if (isLoopback(host) || this.names.has(host)) return true;
    // Bound to every address: each address of this machine is the bound address.
    if (WILDCARD.has(canonical(this.bind)) && net.isIP(host)) return localAddresses().has(host);
    return false;
  }
}

/**
 * The addresses a browser can open for a server bound to `bind`: the address itself, or, bound
 * to every address (0.0.0.0, ::), loopback first and then this machine's other addresses
 * (a browser cannot open 0.0.0.0, and the host check would refuse it).
 */
export function browserAddresses(bind: string): string[] {
  const h = canonical(bind);
  if (!WILDCARD.has(h)) return [h];
  const v6 = h === '::';
  const others: string[] = [];
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? [])
      if (!a.internal && (a.family === 'IPv4' || (v6 && !a.address.startsWith('fe80'))))
        others.push(canonical(a.address));
  return ['127.0.0.1', ...new Set(others)];
}

function localAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) out.add(canonical(a.address.replace(/%.*$/, '')));
  return out;
}
