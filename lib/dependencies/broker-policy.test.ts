/**
 * The registry broker's admission rule, table-driven: package metadata and tarball GETs on a
 * configured registry pass; every other method, proxy form, host, query, escape, dot segment and
 * registry endpoint is refused with a reason.
 */
import { describe, expect, it } from "vitest";
import { classifyBrokerRequest, rewriteTarballUrls, type TBrokerPolicy } from "./broker-policy";

const policy: TBrokerPolicy = {
  registries: ["https://registry.example.org/", "https://mirror.example.org/npm/"],
  protocols: ["npm"],
  allowedHosts: ["127.0.0.1:7878"],
};
const get = (target: string, host = "127.0.0.1:7878") =>
  classifyBrokerRequest({ method: "GET", target, host, hasBody: false }, policy);

describe("classifyBrokerRequest", () => {
  it.each([
    ["/left-pad", "packument", "left-pad", "https://registry.example.org/left-pad"],
    ["/@scope%2fpkg", "packument", "@scope/pkg", "https://registry.example.org/@scope%2fpkg"],
    ["/@scope/pkg", "packument", "@scope/pkg", "https://registry.example.org/@scope/pkg"],
    [
      "/left-pad/-/left-pad-1.3.0.tgz",
      "tarball",
      "left-pad",
      "https://registry.example.org/left-pad/-/left-pad-1.3.0.tgz",
    ],
    ["/@scope/pkg/-/pkg-1.0.0.tgz", "tarball", "@scope/pkg", "https://registry.example.org/@scope/pkg/-/pkg-1.0.0.tgz"],
  ])("admits GET %s as a %s", (target, artifact, packageName, upstream) => {
    expect(get(target)).toMatchObject({ kind: "allowed", artifact, packageName, upstream: new URL(upstream) });
  });

  it.each([
    ["POST", "/left-pad", "127.0.0.1:7878", false, 405],
    ["PUT", "/left-pad", "127.0.0.1:7878", false, 405],
    ["HEAD", "/left-pad", "127.0.0.1:7878", false, 405],
    ["CONNECT", "registry.example.org:443", "registry.example.org:443", false, 405],
    ["GET", "http://evil.example/left-pad", "evil.example", false, 403],
    ["GET", "https://registry.example.org/left-pad", "127.0.0.1:7878", false, 403],
    ["GET", "//evil.example/x", "127.0.0.1:7878", false, 403],
    ["GET", "/left-pad", "evil.example", false, 403],
    ["GET", "/left-pad", undefined, false, 403],
    ["GET", "/left-pad", "127.0.0.1:7878", true, 400],
    ["GET", "/-/v1/search?text=a", "127.0.0.1:7878", false, 403],
    ["GET", "/-/whoami", "127.0.0.1:7878", false, 403],
    ["GET", "/-/npm/v1/security/advisories/bulk", "127.0.0.1:7878", false, 403],
    ["GET", "/a/../../etc/passwd", "127.0.0.1:7878", false, 403],
    ["GET", "/%2e%2e/etc/passwd", "127.0.0.1:7878", false, 403],
    ["GET", "/left-pad/-/left-pad-1.3.0.exe", "127.0.0.1:7878", false, 403],
  ] as const)("refuses %s %s (Host %s, body %s) with %i", (method, target, host, hasBody, status) => {
    const decision = classifyBrokerRequest({ method, target, host, hasBody }, policy);
    expect(decision).toMatchObject({ kind: "refused", status });
  });

  it("routes a path under a registry's own prefix to that registry", () => {
    expect(
      classifyBrokerRequest(
        { method: "GET", target: "/npm/left-pad", host: "127.0.0.1:7878", hasBody: false },
        { ...policy, registries: ["https://mirror.example.org/npm/"] },
      ),
    ).toMatchObject({ kind: "allowed", upstream: new URL("https://mirror.example.org/npm/left-pad") });
    expect(
      classifyBrokerRequest(
        { method: "GET", target: "/left-pad", host: "127.0.0.1:7878", hasBody: false },
        { ...policy, registries: ["https://mirror.example.org/npm/"] },
      ),
    ).toMatchObject({ kind: "refused", status: 404 });
  });
});

describe("rewriteTarballUrls", () => {
  it("points tarballs on a configured registry at the guest's registry address and leaves others unreachable", () => {
    const packument = {
      versions: {
        "1.0.0": { dist: { tarball: "https://registry.example.org/a/-/a-1.0.0.tgz" } },
        "2.0.0": { dist: { tarball: "https://elsewhere.example/a-2.0.0.tgz" } },
      },
    };
    expect(rewriteTarballUrls(packument, policy.registries, "http://127.0.0.1:7878")).toBe(1);
    expect(packument.versions["1.0.0"].dist.tarball).toBe("http://127.0.0.1:7878/a/-/a-1.0.0.tgz");
    expect(packument.versions["2.0.0"].dist.tarball).toBe("https://elsewhere.example/a-2.0.0.tgz");
  });
});
