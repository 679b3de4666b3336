/**
 * Rules for where the control plane fetches a target repository from, and to whom the mirror's
 * credential goes (issue 12, item 10). Pure: no I/O.
 *
 * - A target is fetched over https. Plain http would hand the base tree (what the teacher later
 *   approves on top of) and the token to anyone on the path, so it is allowed only to a loopback
 *   host — the local forge in development. A local path (`/…` or `file://…`) never crosses a
 *   network and carries no credential; it stays allowed for an operator-configured host mirror.
 * - The token is sent only to the publication host (the forge the publication token belongs to),
 *   and only as `http.<clone URL>.extraHeader`, which git applies to that URL alone — never as a
 *   global `http.extraHeader` that would follow a fetch to any other host.
 */

const LOOPBACK_HOSTS = new Set(["localhost", "[::1]", "::1"]);

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return LOOPBACK_HOSTS.has(host) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export type TCloneUrlCheck =
  { kind: "ok"; transport: "https" | "http-loopback" | "local" } | { kind: "refused"; reason: string };

export function checkTargetCloneUrl(cloneUrl: string): TCloneUrlCheck {
  if (cloneUrl.startsWith("/") || cloneUrl.startsWith("file://")) return { kind: "ok", transport: "local" };
  let url: URL;
  try {
    url = new URL(cloneUrl);
  } catch {
    return { kind: "refused", reason: "the clone URL is not a URL" };
  }
  if (url.username || url.password)
    return { kind: "refused", reason: "credentials do not belong in the URL; the control plane supplies them" };
  if (url.protocol === "https:") return { kind: "ok", transport: "https" };
  if (url.protocol === "http:" && isLoopbackHost(url.hostname)) return { kind: "ok", transport: "http-loopback" };
  if (url.protocol === "http:")
    return {
      kind: "refused",
      reason:
        "a target repository must be fetched over https (plain http is allowed only on loopback, for the local forge)",
    };
  return { kind: "refused", reason: "a target repository is an https URL, a loopback http URL or a local path" };
}

/** The host a publication token belongs to: the API host, with GitHub's `api.` prefix dropped. */
function publicationHosts(apiBaseUrl: string): Set<string> {
  const api = new URL(apiBaseUrl);
  const hosts = new Set([api.host.toLowerCase()]);
  if (api.hostname.toLowerCase().startsWith("api.")) hosts.add(api.host.toLowerCase().slice("api.".length));
  return hosts;
}

/**
 * The git configuration that carries the token for one fetch: scoped to exactly this clone URL,
 * redirects off (a redirect must not carry the header elsewhere), and nothing at all when the
 * clone URL is not on the publication host or not a network transport the rules above allow.
 */
export function mirrorCredentialConfig(input: {
  cloneUrl: string;
  token: string | undefined;
  apiBaseUrl: string | undefined;
}): [string, string][] {
  if (!input.token || !input.apiBaseUrl) return [];
  const check = checkTargetCloneUrl(input.cloneUrl);
  if (check.kind !== "ok" || check.transport === "local") return [];
  const url = new URL(input.cloneUrl);
  if (!publicationHosts(input.apiBaseUrl).has(url.host.toLowerCase())) return [];
  return [
    [`http.${input.cloneUrl}.extraHeader`, `Authorization: Bearer ${input.token}`],
    ["http.followRedirects", "false"],
  ];
}
