/**
 * Where a credential may be sent (issue 27, item 5): an endpoint that receives one of our
 * credentials as a header (the relay upstream, the publication API) is https, or plain http only
 * to this host's loopback (127.0.0.0/8, ::1, localhost) — the local forge and the tests' fake
 * upstreams. Plain http to anything else would put the credential on the network in clear. Used
 * by the setting schemas (so a stored value that breaks it fails closed on read) and again by the
 * clients right before they send.
 */
import { AppError } from "../errors";

export const SECURE_ENDPOINT_RULE = "must be https (plain http only to loopback: 127.0.0.0/8, ::1, localhost)";

/** A URL's hostname (as `new URL` normalises it) that names this host's loopback interface. */
export function isLoopbackHostname(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === "localhost" || host === "[::1]") return true;
  const octets = host.split(".");
  return octets.length === 4 && octets[0] === "127" && octets.every((o) => /^\d{1,3}$/.test(o) && Number(o) <= 255);
}

export function isSecureEndpoint(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHostname(url.hostname));
}

/** Throws ENDPOINT_INSECURE unless `value` may receive a credential; `what` names it for the operator. */
export function assertSecureEndpoint(value: string, what: string): void {
  if (isSecureEndpoint(value)) return;
  let host = "(not a URL)";
  try {
    host = `${new URL(value).protocol}//${new URL(value).host}`;
  } catch {
    /* keep the placeholder */
  }
  throw new AppError("ENDPOINT_INSECURE", `The ${what} ${host.slice(0, 300)} is refused: it ${SECURE_ENDPOINT_RULE}.`, {
    what,
  });
}
