/**
 * Which network addresses tessera may connect to upstream. Every `url`, STAC href and mosaic entry
 * is attacker-controlled, so by default only public unicast addresses are reached: loopback,
 * private, link-local, carrier-grade NAT, unique-local, multicast, broadcast, unspecified,
 * reserved and the IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4, Teredo) are refused
 * unless `TESSERA_ALLOWED_NETWORKS` (CIDRs) opens a range.
 *
 * The check is made on the addresses a connection actually uses: `lookup` replaces the DNS lookup
 * of node's sockets, so the answer that is checked is the answer that is connected to (a name
 * cannot resolve to a public address for the check and to 127.0.0.1 for the connect), and
 * `checkSocket` verifies the peer once connected. Address classification is ipaddr.js's
 * (maintained, used by Express's proxy-addr); decisions are cached per address string.
 */
import dns from 'node:dns';
import net, { type LookupFunction, type Socket } from 'node:net';
import ipaddr from 'ipaddr.js';

export const ALLOWED_NETWORKS_SETTING = 'TESSERA_ALLOWED_NETWORKS';

/** Raised when a connection would reach a refused address; `address` is never contacted. */
export class NetworkRefused extends Error {
  readonly code = 'ETESSERA_NETWORK_REFUSED';
  constructor(
    readonly host: string,
    readonly address: string,
    readonly range: string,
  ) {
    super(
      `upstream ${host === address ? `address ${address}` : `host '${host}' (${address})`} is refused: ${range} addresses are not reached ` +
        `unless ${ALLOWED_NETWORKS_SETTING} opens them`,
    );
    this.name = 'NetworkRefused';
  }
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Resolves a name to all its addresses (dns.lookup with `all: true`; tests give their own). */
export type Resolver = (hostname: string, callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => void;

const systemResolver: Resolver = (hostname, callback) => dns.lookup(hostname, { all: true }, callback);

const MAX_CACHED = 4096;

export class NetworkPolicy {
  private readonly allowed: Cidr[];
  /** Address text → undefined (allowed) or the name of the refused range. */
  private readonly decisions = new Map<string, string | undefined>();

  /** `allowedNetworks`: CIDRs (`10.0.0.0/8`, `::1/128`) or single addresses; throws on a malformed one. */
  constructor(
    readonly allowedNetworks: readonly string[] = [],
    private readonly resolve: Resolver = systemResolver,
  ) {
    this.allowed = allowedNetworks.map(parseNetwork);
  }

  /** undefined when `address` (an IP literal) may be connected to, else the refused range's name. */
  refusal(address: string): string | undefined {
    if (this.decisions.has(address)) return this.decisions.get(address);
    const decision = this.decide(address);
    if (this.decisions.size >= MAX_CACHED) this.decisions.clear();
    this.decisions.set(address, decision);
    return decision;
  }

  /** Throws NetworkRefused when `host` is an IP literal that may not be reached; names pass (see `lookup`). */
  checkLiteral(host: string): void {
    const bare = host.replace(/^\[|\]$/g, '');
    if (net.isIP(bare) === 0) return;
    const range = this.refusal(bare);
    if (range !== undefined) throw new NetworkRefused(bare, bare, range);
  }

  /**
   * A drop-in for node's DNS lookup on sockets: resolves every address of a name and keeps those
   * the policy allows; a name left with none fails with NetworkRefused before any connection.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.resolve(hostname, (err, list) => {
      if (err) {
        callback(err, '', 4);
        return;
      }
      if (options.family === 4 || options.family === 6) list = list.filter((a) => a.family === options.family);
      const usable = list.filter((a) => this.refusal(a.address) === undefined);
      if (usable.length === 0) {
        const first = list[0];
        const refused = first ? new NetworkRefused(hostname, first.address, this.refusal(first.address) ?? 'unknown') : new Error(`no address for ${hostname}`);
        callback(refused as NodeJS.ErrnoException, '', 4);
        return;
      }
      if (options.all) callback(null, usable as unknown as string, 4);
      else callback(null, usable[0]!.address, usable[0]!.family);
    });
  };

  /** Destroys `socket` if the peer it connected to is refused (a last line behind `lookup`). */
  checkSocket(socket: Socket): void {
    const verify = (): void => {
      const peer = socket.remoteAddress;
      const range = peer === undefined ? 'unknown' : this.refusal(peer);
      if (range !== undefined) socket.destroy(new NetworkRefused(peer ?? '?', peer ?? '?', range));
    };
    if (socket.connecting) socket.once('connect', verify);
    else verify();
  }

  private decide(address: string): string | undefined {
    let ip: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      ip = ipaddr.process(address);
    } catch {
      return 'unparsable';
    }
    for (const [net, bits] of this.allowed) {
      if (net.kind() === ip.kind() && ip.match(net, bits)) return undefined;
    }
    const range = ip.range();
    return range === 'unicast' ? undefined : range;
  }
}

function parseNetwork(text: string): Cidr {
  const value = text.trim();
  try {
    const [ip, bits] = value.includes('/') ? ipaddr.parseCIDR(value) : [ipaddr.parse(value), -1];
    const width = bits < 0 ? (ip.kind() === 'ipv4' ? 32 : 128) : bits;
    // Addresses are compared after ipaddr.process (IPv4-mapped IPv6 becomes IPv4): so are networks.
    if (ip instanceof ipaddr.IPv6 && ip.isIPv4MappedAddress()) return [ip.toIPv4Address(), Math.max(0, width - 96)];
    return [ip, width];
  } catch {
    throw new Error(`${ALLOWED_NETWORKS_SETTING}: '${value}' is not a network (write a CIDR such as 10.0.0.0/8 or ::1/128)`);
  }
}
