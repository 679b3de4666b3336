import { describe, expect, it } from "vitest";
import { ZAddTargetRepositorySchema } from "./target-repositories";
import { checkTargetCloneUrl, mirrorCredentialConfig } from "./clone-url";

describe("target repository clone URLs", () => {
  it.each([
    ["https://github.com/school/calculator.git", "https"],
    ["http://127.0.0.1:7490/demo/calculator.git", "http-loopback"],
    ["http://localhost:7490/demo/calculator.git", "http-loopback"],
    ["http://[::1]:7490/demo/calculator.git", "http-loopback"],
    ["/srv/mirrors/calculator.git", "local"],
    ["file:///srv/mirrors/calculator.git", "local"],
  ])("accepts %s (%s)", (url, transport) => {
    expect(checkTargetCloneUrl(url)).toEqual({ kind: "ok", transport });
  });

  it.each([
    "http://github.com/school/calculator.git",
    "http://10.0.0.5/x.git",
    "http://127.0.0.1.evil.example/x.git",
    "git://github.com/x.git",
    "ssh://git@github.com/x.git",
    "https://user:pw@github.com/x.git",
    "not a url",
  ])("refuses %s", (url) => {
    expect(checkTargetCloneUrl(url).kind).toBe("refused");
    expect(ZAddTargetRepositorySchema.safeParse({ name: "school/x", cloneUrl: url }).success).toBe(false);
  });

  it("a repository added over plain http to a non-loopback host is refused with the reason", () => {
    const parsed = ZAddTargetRepositorySchema.safeParse({
      name: "school/x",
      cloneUrl: "http://forge.school.example/school/x.git",
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(/https/);
  });
});

describe("the mirror's credential", () => {
  const token = "ghp_test_token";
  it("is scoped to the clone URL on the publication host, with redirects off", () => {
    expect(
      mirrorCredentialConfig({
        cloneUrl: "https://github.com/school/x.git",
        token,
        apiBaseUrl: "https://api.github.com",
      }),
    ).toEqual([
      ["http.https://github.com/school/x.git.extraHeader", `Authorization: Bearer ${token}`],
      ["http.followRedirects", "false"],
    ]);
    expect(
      mirrorCredentialConfig({
        cloneUrl: "https://ghe.school.example/school/x.git",
        token,
        apiBaseUrl: "https://ghe.school.example/api/v3",
      })[0]![0],
    ).toBe("http.https://ghe.school.example/school/x.git.extraHeader");
  });

  it("is not sent to another host, over a refused transport, or to a local path", () => {
    expect(
      mirrorCredentialConfig({
        cloneUrl: "https://gitlab.example/school/x.git",
        token,
        apiBaseUrl: "https://api.github.com",
      }),
    ).toEqual([]);
    expect(
      mirrorCredentialConfig({ cloneUrl: "http://127.0.0.1:9/x.git", token, apiBaseUrl: "http://127.0.0.1:8" }),
    ).toEqual([]);
    expect(
      mirrorCredentialConfig({
        cloneUrl: "http://github.com/school/x.git",
        token,
        apiBaseUrl: "https://api.github.com",
      }),
    ).toEqual([]);
    expect(mirrorCredentialConfig({ cloneUrl: "/srv/x.git", token, apiBaseUrl: "https://api.github.com" })).toEqual([]);
    expect(
      mirrorCredentialConfig({
        cloneUrl: "https://github.com/school/x.git",
        token: undefined,
        apiBaseUrl: "https://api.github.com",
      }),
    ).toEqual([]);
  });
});
