/**
 * Which client address a sign-in counts against. `X-Forwarded-For` is written by whoever sends
 * the request, so it is believed only as far as configured proxies vouch for it
 * (TRUSTED_PROXIES): walking the chain from the nearest hop outwards, the first address that is
 * not a trusted proxy is the client. With no trusted proxies the header is ignored entirely and
 * only the socket address counts (issue 12, item 5). Next.js route handlers do not expose the
 * socket address, so the app's own server (scripts/web-server.ts) writes it as the last hop of
 * X-Forwarded-For (forwardedForFromPeer); without that server (`next dev`) the address is
 * unknown: the per-address throttle is skipped — the per-account delay still applies — rather
 * than keyed on a spoofable value.
 */
import { isIPv4, isIPv6 } from "node:net";

export type TClientAddressInput = {
  /** The raw X-Forwarded-For header value(s), as received. */
  forwardedFor: string | readonly string[] | undefined;
  /** The TCP peer address, when the server exposes it. */
  socketAddress: string | undefined;
  /** Exact addresses of the proxies in front of the app (TRUSTED_PROXIES). */
  trustedProxies: readonly string[];
};

const MAX_HOPS = 32;

function normalise(address: string): string {
  const trimmed = address.trim().toLowerCase();
  // ::ffff:10.0.0.1 is 10.0.0.1 arriving on a dual-stack socket.
  return trimmed.startsWith("::ffff:") && trimmed.includes(".") ? trimmed.slice(7) : trimmed;
}

function isPlausibleAddress(value: string): boolean {
  return value.length > 0 && value.length <= 64 && /^[0-9a-f:.]+$/.test(value);
}

export function resolveClientAddress(input: TClientAddressInput): string | null {
  const trusted = new Set(input.trustedProxies.map(normalise));
  const socket = input.socketAddress ? normalise(input.socketAddress) : undefined;
  if (socket && !trusted.has(socket)) return socket;
  if (trusted.size === 0) return socket ?? null;
  const header = typeof input.forwardedFor === "string" ? input.forwardedFor : (input.forwardedFor ?? []).join(",");
  const hops = header.split(",").slice(-MAX_HOPS).map(normalise).filter(isPlausibleAddress);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!trusted.has(hops[i]!)) return hops[i]!;
  }
  return hops[0] ?? socket ?? null;
}

/** Parses TRUSTED_PROXIES: comma- or space-separated IP addresses; empty = none. */
export function parseTrustedProxies(value: string | undefined): string[] {
  return (value ?? "")
    .split(/[\s,]+/)
    .map(normalise)
    .filter((v) => v.length > 0);
}

/**
 * What the app's own HTTP server (scripts/web-server.ts) writes into X-Forwarded-For before Next
 * sees the request: an untrusted peer's header is replaced by the peer's socket address (a client
 * cannot choose the address it is throttled under); a trusted proxy's chain is kept and the
 * proxy's own address appended, as every proxy does. Either way the last hop is the socket address.
 */
export function forwardedForFromPeer(input: TClientAddressInput): string | undefined {
  if (!input.socketAddress) return undefined;
  const socket = normalise(input.socketAddress);
  if (!new Set(input.trustedProxies.map(normalise)).has(socket)) return socket;
  const header = typeof input.forwardedFor === "string" ? input.forwardedFor : (input.forwardedFor ?? []).join(",");
  const kept = header.split(",").slice(-MAX_HOPS).map(normalise).filter(isPlausibleAddress);
  return [...kept, socket].join(", ");
}

/** Reads an X-Forwarded-For written by forwardedForFromPeer: its last hop is the socket address. */
export function resolveClientAddressFromPeerHeader(
  forwardedFor: string | readonly string[] | undefined,
  trustedProxies: readonly string[],
): string | null {
  const header = typeof forwardedFor === "string" ? forwardedFor : (forwardedFor ?? []).join(",");
  const hops = header
    .split(",")
    .map((hop) => hop.trim())
    .filter((hop) => hop.length > 0);
  const socketAddress = hops.pop();
  if (!socketAddress || !isPlausibleAddress(normalise(socketAddress))) return null;
  return resolveClientAddress({ forwardedFor: hops.join(","), socketAddress, trustedProxies });
}

/** Rewrites a request's X-Forwarded-For in place (see forwardedForFromPeer); the app's server calls it before Next. */
export function applyPeerAddress(
  request: { headers: Record<string, string | string[] | undefined>; socket: { remoteAddress?: string } },
  trustedProxies: readonly string[],
): void {
  const value = forwardedForFromPeer({
    forwardedFor: request.headers["x-forwarded-for"],
    socketAddress: request.socket.remoteAddress,
    trustedProxies,
  });
  if (value === undefined) delete request.headers["x-forwarded-for"];
  else request.headers["x-forwarded-for"] = value;
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a trailing dotted quad folded in). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const tail = text.slice(text.lastIndexOf(":") + 1);
  if (tail.includes(".")) {
    const [a, b, c, d] = tail.split(".").map(Number) as [number, number, number, number];
    text = `${text.slice(0, text.length - tail.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split("::") as [string, string | undefined];
  const left = head ? head.split(":") : [];
  const right = rest ? rest.split(":") : [];
  const middle = rest === undefined ? [] : Array.from({ length: 8 - left.length - right.length }, () => "0");
  return [...left, ...middle, ...right].map((group) => parseInt(group, 16));
}

/**
 * The bucket an address is throttled under. An IPv4 address is its own bucket; an IPv6 address
 * counts by its /64 prefix, because one subscriber (one host, even) routinely holds a whole /64
 * and could otherwise take a fresh address — a fresh throttle — for every guess (issue 27, item 4).
 */
export function addressBucket(address: string): string {
  const value = normalise(address).split("%")[0]!;
  if (isIPv4(value) || !isIPv6(value)) return value;
  const prefix = ipv6Groups(value)
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(":");
  return `${prefix}::/64`;
}
