/**
 * Which client address a sign-in counts against. `X-Forwarded-For` is written by whoever sends
 * the request, so it is believed only as far as configured proxies vouch for it
 * (TRUSTED_PROXIES): walking the chain from the nearest hop outwards, the first address that is
 * not a trusted proxy is the client. With no trusted proxies the header is ignored entirely and
 * only the socket address counts (issue 12, item 5). When the socket address is not known to the
 * caller (Next.js route handlers do not expose it), the result is null and the per-address
 * throttle is skipped — the per-account delay still applies — rather than keyed on a spoofable value.
 */

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
  return (value ?? "").split(/[\s,]+/).map(normalise).filter((v) => v.length > 0);
}
