import { describe, expect, it } from "vitest";
import { GUEST_RELAY_SOCKET_DIR } from "../../lib/contract/guest-layout";
import { buildBwrapArgs, guestArgv, guestEnvironment, READY_FD, withStartSignal } from "./sandbox-args";

const manifest = {
  schemaVersion: 1 as const,
  binds: [
    { host: "/usr", guest: "/usr" },
    { host: "/opt/tools", guest: "/opt/school-core/tools" },
  ],
  entries: [
    { kind: "symlink" as const, path: "bin", target: "usr/bin" },
    { kind: "dir" as const, path: "etc" },
    { kind: "file" as const, path: "etc/passwd", mode: 0o644, size: 1, sha256: "x" },
    { kind: "dir" as const, path: "opt" },
  ],
};

function build(extra: Partial<Parameters<typeof buildBwrapArgs>[0]> = {}) {
  return buildBwrapArgs({
    imageRootDir: "/data/substrate/images/abc/root",
    manifest,
    tmpDir: "/data/m/tmp",
    workspaceDir: "/data/m/workspace",
    env: { PATH: "/bin", X: "1" },
    cwd: "/workspace",
    argv: ["/bin/sh", "-lc", "true"],
    ...extra,
  });
}

function pairsAfter(args: string[], flag: string): string[][] {
  return args.flatMap((a, i) => (a === flag ? [args.slice(i + 1, i + 3)] : []));
}

describe("buildBwrapArgs", () => {
  it("unshares everything, clears the environment and dies with its parent", () => {
    const args = build();
    for (const flag of ["--unshare-all", "--clearenv", "--die-with-parent", "--new-session"])
      expect(args).toContain(flag);
    expect(args).not.toContain("--share-net");
  });

  it("disables nested user namespaces and loads the seccomp filter from its fd, before the guest command", () => {
    const args = build({ hardening: { disableUserns: true, seccompFd: 4 } });
    const end = args.indexOf("--");
    expect(args.indexOf("--unshare-user")).toBeGreaterThan(-1);
    expect(args.indexOf("--disable-userns")).toBeGreaterThan(args.indexOf("--unshare-user"));
    expect(pairsAfter(args, "--seccomp")[0]![0]).toBe("4");
    expect(args.indexOf("--seccomp")).toBeLessThan(end);
    // an old bubblewrap without --disable-userns still gets the filter
    const old = build({ hardening: { disableUserns: false, seccompFd: 4 } });
    expect(old).not.toContain("--disable-userns");
    expect(old).toContain("--seccomp");
  });

  it("mounts only the image, its binds and the machine's two roots — read-only except /tmp and /workspace", () => {
    const args = build();
    expect(pairsAfter(args, "--bind")).toEqual([
      ["/data/m/tmp", "/tmp"],
      ["/data/m/workspace", "/workspace"],
    ]);
    expect(pairsAfter(args, "--ro-bind")).toEqual([
      ["/usr", "/usr"],
      ["/data/substrate/images/abc/root/etc", "/etc"],
      ["/data/substrate/images/abc/root/opt", "/opt"],
      ["/opt/tools", "/opt/school-core/tools"],
    ]);
    expect(args.slice(args.indexOf("--remount-ro"), args.indexOf("--remount-ro") + 2)).toEqual(["--remount-ro", "/"]);
  });

  it("recreates a top-level image symlink instead of following it on the host", () => {
    expect(pairsAfter(build(), "--symlink")).toEqual([["usr/bin", "/bin"]]);
  });

  it("mounts a nested bind after its parent", () => {
    const args = build();
    expect(args.indexOf("/opt/school-core/tools")).toBeGreaterThan(args.indexOf("/opt"));
  });

  it("exposes the relay directory read-only only when asked", () => {
    expect(build()).not.toContain(GUEST_RELAY_SOCKET_DIR);
    expect(pairsAfter(build({ relayDir: "/data/run/x" }), "--ro-bind")).toContainEqual([
      "/data/run/x",
      GUEST_RELAY_SOCKET_DIR,
    ]);
  });

  it("passes the command after -- untouched", () => {
    const args = build({ argv: ["echo", "--unshare-all; rm -rf /"] });
    expect(args.slice(args.indexOf("--") + 1)).toEqual(["echo", "--unshare-all; rm -rf /"]);
  });
});

describe("guest command and environment", () => {
  it("runs a string via sh -lc and an array as argv", () => {
    expect(guestArgv("echo hi")).toEqual(["/bin/sh", "-lc", "echo hi"]);
    expect(guestArgv(["node", "-v"])).toEqual(["node", "-v"]);
  });

  it("layers base < machine < call environment and nothing else", () => {
    const env = guestEnvironment({ A: "machine", B: "machine" }, { B: "call" });
    expect(env).toMatchObject({ A: "machine", B: "call", HOME: "/workspace" });
    expect(Object.keys(env).sort()).toEqual(["A", "B", "HOME", "LANG", "LOGNAME", "PATH", "TMPDIR", "USER"]);
  });
});

describe("start signal", () => {
  it("wraps the command in the shim and passes it on untouched, after the shim's own name", () => {
    const argv = withStartSignal(["node", "--unshare-all; rm -rf /", "$HOME"]);
    expect(argv.slice(0, 2)).toEqual(["/bin/sh", "-c"]);
    expect(argv.slice(3)).toEqual(["school-core-start", "node", "--unshare-all; rm -rf /", "$HOME"]);
    expect(argv[2]).toContain(`exec ${READY_FD}>&-`);
  });
});
