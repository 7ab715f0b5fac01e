import { LRUCache } from "lru-cache";
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { BlockList, isIP } from "node:net";
import { networkInterfaces } from "node:os";

/**
 * Where outbound calls (agents, webhooks, judges) may go. Teams test agents on private networks, so
 * private addresses are allowed; cloud metadata and link-local addresses never are; this machine
 * itself (loopback in every form, its own addresses) and tunnelled forms (Teredo) are refused unless
 * the operator's allowlist names them. An operator can narrow egress to an allowlist of hosts and
 * CIDRs. Addresses are checked after DNS resolution, at connect time, so a name that re-resolves
 * elsewhere cannot slip through.
 */
const FORBIDDEN = new BlockList();
FORBIDDEN.addSubnet("169.254.0.0", 16, "ipv4"); // link-local, incl. 169.254.169.254 metadata
FORBIDDEN.addSubnet("0.0.0.0", 8, "ipv4");
FORBIDDEN.addAddress("100.100.100.200", "ipv4"); // Alibaba Cloud metadata
FORBIDDEN.addSubnet("fe80::", 10, "ipv6"); // link-local
FORBIDDEN.addAddress("fd00:ec2::254", "ipv6"); // AWS metadata over IPv6
FORBIDDEN.addAddress("fd20:ce::254", "ipv6"); // Google Cloud metadata over IPv6
FORBIDDEN.addAddress("::", "ipv6");

/** This machine's loopback, and what tunnels through to elsewhere: closed unless the allowlist opens it. */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");
const TUNNELS = new BlockList();
TUNNELS.addSubnet("2001::", 32, "ipv6"); // Teredo: an IPv4 host behind a tunnel

const FORBIDDEN_HOSTS = new Set([
  "metadata.google.internal",
  "metadata.goog",
  "metadata",
  "instance-data",
  "instance-data.ec2.internal",
]);
/** Names that are this machine, whatever they resolve to. */
const isLocalName = (host: string) => host === "localhost" || host.endsWith(".localhost");

/** This machine's own addresses, as its interfaces have them now. */
function ownAddresses(): BlockList {
  const own = new BlockList();
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      own.addAddress(entry.address.replace(/%.*$/, ""), entry.family === "IPv6" ? "ipv6" : "ipv4");
    }
  }
  return own;
}

/** The eight 16-bit groups of an IPv6 address (with `::` and a trailing dotted quad expanded). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(":").map((g) => parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail);
  return tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * IPv4 addresses carried inside IPv6 ones (mapped `::ffff:a.b.c.d`, translated `::ffff:0:a.b.c.d`,
 * compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) lead to the same IPv4 host: they
 * are checked as that host.
 */
function embeddedIPv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && (g[5] === 0xffff || (g[5] === 0 && (g[6]! > 0 || g[7]! > 1)))) return v4(g[6]!, g[7]!);
  // IPv4-translated (SIIT): ::ffff:0:a.b.c.d
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return v4(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4(g[6]!, g[7]!);
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!);
  return undefined;
}

function normalise(address: string): { address: string; family: "ipv4" | "ipv6" } {
  if (isIP(address) !== 6) return { address, family: "ipv4" };
  const inner = embeddedIPv4(address);
  return inner ? { address: inner, family: "ipv4" } : { address, family: "ipv6" };
}

/** A host as compared: lower case, without brackets or the root's trailing dot (`metadata.google.internal.` is the same host). */
const hostOf = (hostname: string) =>
  hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.+$/, "")
    .toLowerCase();

export class EgressDeniedError extends Error {
  override name = "EgressDeniedError";
}

export interface EgressPolicy {
  /** Why the URL's host may not be called, or undefined if it may (addresses are checked again at connect). */
  checkHost(hostname: string): string | undefined;
  /** A drop-in for dns.lookup that refuses forbidden addresses. */
  lookup: typeof dnsLookup;
}

export interface EgressPolicyOptions {
  allowlist?: readonly string[];
  own?: BlockList;
  /**
   * This machine (loopback, its own addresses) may be called without an allowlist: for a process
   * that runs as its user on the user's own machine (`assure test`), not for a service that others reach.
   */
  thisMachineOpen?: boolean;
}

export function makeEgressPolicy({
  allowlist = [],
  own = ownAddresses(),
  thisMachineOpen = false,
}: EgressPolicyOptions = {}): EgressPolicy {
  const allowedNets = new BlockList();
  const allowedHosts = new Set<string>();
  for (const entry of allowlist) {
    const [base, bits] = entry.split("/");
    const family = isIP(base ?? "");
    if (family === 0) allowedHosts.add(hostOf(entry));
    else if (bits === undefined) allowedNets.addAddress(base!, family === 6 ? "ipv6" : "ipv4");
    else allowedNets.addSubnet(base!, Number(bits), family === 6 ? "ipv6" : "ipv4");
  }
  const restricted = allowlist.length > 0;

  function checkAddress(raw: string, hostname: string): string | undefined {
    const { address, family } = normalise(raw);
    if (FORBIDDEN.check(address, family)) return `not allowed: ${address} is a link-local or cloud metadata address`;
    if (allowedHosts.has(hostOf(hostname)) || allowedNets.check(address, family)) return undefined;
    if (restricted) return `not allowed: ${hostname} (${address}) is not on the egress allowlist`;
    const thisMachine = LOOPBACK.check(address, family) || own.check(address, family);
    if (TUNNELS.check(address, family) || (thisMachine && !thisMachineOpen)) {
      return `not allowed: ${address} is this machine (loopback, its own address) or a tunnel; ASSURE_EGRESS_ALLOWLIST can open it`;
    }
    return undefined;
  }

  function decideHost(hostname: string): string | undefined {
    const host = hostOf(hostname);
    if (FORBIDDEN_HOSTS.has(host)) return `not allowed: ${host} is a cloud metadata host`;
    if (isIP(host)) return checkAddress(host, host);
    if (isLocalName(host) && !allowedHosts.has(host) && !thisMachineOpen) {
      return `not allowed: ${host} is this machine; ASSURE_EGRESS_ALLOWLIST can open it`;
    }
    return undefined;
  }

  // The answer for a host name never changes under one policy (addresses a name resolves to are
  // checked at connect time instead): agents are called many times, so it is worth keeping.
  const decided = new LRUCache<string, { refusal: string | undefined }>({ max: 1000 });
  function checkHost(hostname: string): string | undefined {
    let answer = decided.get(hostname);
    if (!answer) {
      answer = { refusal: decideHost(hostname) };
      decided.set(hostname, answer);
    }
    return answer.refusal;
  }

  const lookup = ((hostname: string, options: LookupOptions, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error);
      for (const { address } of addresses) {
        const reason = checkAddress(address, hostname);
        if (reason) return callback(new EgressDeniedError(`Egress refused (${reason})`));
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(new Error(`No address for ${hostname}`));
      callback(null, first.address, first.family);
    });
  }) as unknown as typeof dnsLookup;

  return { checkHost, lookup };
}
