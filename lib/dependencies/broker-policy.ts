/**
 * What the registry broker lets through, pure (issue 18). The broker is the builder guest's only
 * egress, so it is a capability, not a proxy (the relay's rule, seed 000): a GET for a package's
 * metadata or tarball on a configured registry is admitted; any other method, an absolute-form
 * or CONNECT (proxy) request, another Host, a query, an encoded or dotted path, or a registry
 * endpoint that is not a package download (search, login, audit, publish …) is refused with a
 * reason that goes into the setup run's record.
 */
import { registryForPath, type TRegistryProtocol } from "./recipes";

export type TBrokerPolicy = {
  registries: readonly string[];
  protocols: readonly TRegistryProtocol[];
  /** Host header values the guest may use (the in-guest forwarder's address, and ours). */
  allowedHosts: readonly string[];
};

export type TBrokerRequest = { method: string; target: string; host: string | undefined; hasBody: boolean };

export type TDownloadKind = "packument" | "tarball" | "pypi-index" | "pypi-file";

export type TBrokerDecision =
  | { kind: "allowed"; upstream: URL; artifact: TDownloadKind; packageName: string }
  | { kind: "refused"; status: number; reason: string };

const NAME = "[A-Za-z0-9][A-Za-z0-9._~-]{0,213}";
const SCOPE = "@[A-Za-z0-9][A-Za-z0-9._~-]{0,213}";
const NPM_PACKUMENT = new RegExp(`^(?:(${SCOPE})(?:%2[fF]|/))?(${NAME})$`);
const NPM_TARBALL = new RegExp(`^(?:(${SCOPE})/)?(${NAME})/-/[A-Za-z0-9._~-]{1,300}\\.tgz$`);
const PYPI_INDEX = /^(?:simple\/)?([A-Za-z0-9][A-Za-z0-9._-]{0,200})\/?$/;
const PYPI_FILE = /^(?:[A-Za-z0-9._+~-]{1,200}\/){0,8}([A-Za-z0-9][A-Za-z0-9._+~-]{0,250})\.(?:whl|tar\.gz|zip)$/;

function refused(status: number, reason: string): TBrokerDecision {
  return { kind: "refused", status, reason };
}

function classifyPath(
  rest: string,
  protocols: readonly TRegistryProtocol[],
): { artifact: TDownloadKind; packageName: string } | undefined {
  if (protocols.includes("npm")) {
    const tarball = NPM_TARBALL.exec(rest);
    if (tarball) return { artifact: "tarball", packageName: tarball[1] ? `${tarball[1]}/${tarball[2]}` : tarball[2]! };
    const packument = NPM_PACKUMENT.exec(rest);
    if (packument)
      return { artifact: "packument", packageName: packument[1] ? `${packument[1]}/${packument[2]}` : packument[2]! };
  }
  if (protocols.includes("pypi")) {
    const index = PYPI_INDEX.exec(rest);
    if (index) return { artifact: "pypi-index", packageName: index[1]!.toLowerCase() };
    const file = PYPI_FILE.exec(rest);
    if (file) return { artifact: "pypi-file", packageName: file[1]!.split("-")[0]!.toLowerCase() };
  }
  return undefined;
}

export function classifyBrokerRequest(request: TBrokerRequest, policy: TBrokerPolicy): TBrokerDecision {
  if (request.method === "CONNECT") return refused(405, "CONNECT (tunnelling) is refused: the broker is not a proxy");
  if (request.method !== "GET")
    return refused(405, `method ${request.method.slice(0, 20)} is refused: package downloads are GET only`);
  // origin-form only; an absolute URL names another host through us, which is what a proxy does
  if (!request.target.startsWith("/") || request.target.startsWith("//"))
    return refused(403, "absolute-form (proxy) requests are refused");
  if (!request.host || !policy.allowedHosts.includes(request.host.toLowerCase()))
    return refused(403, `Host ${String(request.host ?? "(none)").slice(0, 100)} is not the registry broker`);
  if (request.hasBody) return refused(400, "a package download carries no body");
  if (request.target.includes("?") || request.target.includes("#")) return refused(403, "queries are refused");
  const pathname = request.target;
  if (pathname.length > 1024) return refused(414, "path too long");
  // %2f is the one escape npm uses (scoped packument names); any other escape could hide a dot segment
  if (/%(?![2][fF])/.test(pathname) || pathname.includes("\\"))
    return refused(403, "encoded characters other than %2F are refused");
  if (pathname.split("/").some((part) => part === ".." || part === "."))
    return refused(403, "dot segments are refused");
  const registry = registryForPath(policy.registries, pathname);
  if (!registry) return refused(404, "the path is under no configured registry");
  const rest = pathname.slice(registry.pathname.length);
  const match = classifyPath(rest, policy.protocols);
  if (!match) return refused(403, "not a package metadata or tarball download");
  return { kind: "allowed", upstream: new URL(`${registry.origin}${pathname}`), ...match };
}

/**
 * A packument's `dist.tarball` URLs, rewritten to the guest's registry address when they point
 * into a configured registry (so the package manager asks the broker again); others are left as
 * they are — the builder cannot reach them, so they fail closed. Returns how many were foreign.
 */
export function rewriteTarballUrls(packument: unknown, registries: readonly string[], guestOrigin: string): number {
  let foreign = 0;
  const versions = (packument as { versions?: unknown } | null)?.versions;
  if (!versions || typeof versions !== "object") return 0;
  for (const version of Object.values(versions as Record<string, unknown>)) {
    const dist = (version as { dist?: { tarball?: unknown } } | null)?.dist;
    if (!dist || typeof dist.tarball !== "string") continue;
    let url: URL;
    try {
      url = new URL(dist.tarball);
    } catch {
      foreign++;
      continue;
    }
    const owner = registries
      .map((r) => new URL(r))
      .find((r) => r.origin === url.origin && url.pathname.startsWith(r.pathname));
    if (owner) dist.tarball = `${guestOrigin}${url.pathname}`;
    else foreign++;
  }
  return foreign;
}
