/**
 * Builds the bubblewrap command line for one guest command, pure. What the guest gets:
 * every namespace unshared (`--unshare-all`: no network peers at all, own pid/ipc/uts/cgroup/user
 * namespaces), a read-only root, the image's read-only entries and toolchain binds, the machine's
 * two writable roots at /tmp and /workspace, fresh /proc and a minimal /dev, optionally the relay
 * socket directory (read-only) at /run/school-core, no nested user namespaces and a seccomp
 * filter over the kernel surface a guest never needs, and a cleared environment holding only
 * GUEST_BASE_ENV plus the machine's and the call's variables. Nothing else of the host: no home,
 * no project directory, no DATA_DIR, no host sockets.
 */
import path from "node:path";
import { GUEST_RELAY_SOCKET_DIR } from "../../lib/contract/guest-layout";
import type { TImageManifest } from "./image-manifest";

/** The uid/gid the guest sees itself as (mapped to the machine's unprivileged host uid). */
export const GUEST_UID = 1000;
export const GUEST_HOSTNAME = "school-core-guest";

export const GUEST_BASE_ENV: Readonly<Record<string, string>> = {
  PATH: "/opt/school-core/bin:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
  HOME: "/workspace",
  LANG: "C.UTF-8",
  TMPDIR: "/tmp",
  USER: "student",
  LOGNAME: "student",
};

export type TSandboxSpec = {
  imageRootDir: string;
  manifest: TImageManifest;
  tmpDir: string;
  workspaceDir: string;
  /** Host directory holding relay.sock, for allowCidrs machines. */
  relayDir?: string;
  env: Record<string, string>;
  cwd: string;
  argv: string[];
  /** Kernel-surface hardening (issue 12, item 8); absent only in unit tests of the mount layout. */
  hardening?: TSandboxHardening;
};

/**
 * `disableUserns`: `--disable-userns` (bubblewrap ≥ 0.8, probed in bwrap-features.ts).
 * `seccompFd`: the fd the sandbox wrapper opened the compiled filter on (seccomp-filter.ts).
 */
export type TSandboxHardening = { disableUserns: boolean; seccompFd: number | undefined };

type TMount = { guest: string; order: number; args: string[] };

function depth(guest: string): number {
  return guest.split("/").length;
}

export function buildBwrapArgs(spec: TSandboxSpec): string[] {
  const mounts: TMount[] = [];
  for (const bind of spec.manifest.binds)
    mounts.push({ guest: bind.guest, order: 0, args: ["--ro-bind", bind.host, bind.guest] });
  for (const entry of spec.manifest.entries) {
    if (entry.path.includes("/")) continue; // only top-level entries are mounted; the rest rides along
    const guest = `/${entry.path}`;
    // A top-level symlink is recreated in the guest, never followed on the host.
    if (entry.kind === "symlink") mounts.push({ guest, order: 1, args: ["--symlink", entry.target, guest] });
    else mounts.push({ guest, order: 1, args: ["--ro-bind", path.join(spec.imageRootDir, entry.path), guest] });
  }
  // Parents before children, so a nested bind lands inside its parent and not under it.
  mounts.sort((a, b) => depth(a.guest) - depth(b.guest) || a.order - b.order || (a.guest < b.guest ? -1 : 1));

  const args = [
    "--unshare-all",
    // --unshare-all only *tries* a user namespace; --disable-userns needs one for certain
    ...(spec.hardening?.disableUserns ? ["--unshare-user", "--disable-userns"] : []),
    ...(spec.hardening?.seccompFd !== undefined ? ["--seccomp", String(spec.hardening.seccompFd)] : []),
    "--die-with-parent",
    "--new-session",
    "--clearenv",
    "--uid",
    String(GUEST_UID),
    "--gid",
    String(GUEST_UID),
    "--hostname",
    GUEST_HOSTNAME,
    ...mounts.flatMap((m) => m.args),
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--bind",
    spec.tmpDir,
    "/tmp",
    "--bind",
    spec.workspaceDir,
    "/workspace",
  ];
  if (spec.relayDir) args.push("--dir", "/run", "--ro-bind", spec.relayDir, GUEST_RELAY_SOCKET_DIR);
  // The sandbox root is a tmpfs; read-only so the only writable places are /tmp and /workspace.
  args.push("--remount-ro", "/");
  for (const [name, value] of Object.entries(spec.env)) args.push("--setenv", name, value);
  args.push("--chdir", spec.cwd, "--json-status-fd", "3", "--", ...spec.argv);
  return args;
}

/** Base env < machine env < call env; PATH and HOME may be overridden by the caller, like a VM. */
export function guestEnvironment(
  machineEnv: Record<string, string> | undefined,
  callEnv: Record<string, string> | undefined,
): Record<string, string> {
  return { ...GUEST_BASE_ENV, ...machineEnv, ...callEnv };
}

/** A string command runs via `sh -lc`; an array is argv (vendor semantics). */
export function guestArgv(command: string | string[]): string[] {
  return typeof command === "string" ? ["/bin/sh", "-lc", command] : command;
}

/**
 * The fd on which a background command's start shim reports, and the shim itself (POSIX sh, the
 * image's /bin/sh, which string commands need anyway): it looks up argv[0] as execvp would (a
 * path with a slash as is, else each PATH entry), writes `R` (found: running) or `F` (not found)
 * on READY_FD, closes it — the command itself never holds it — and execs the command unchanged
 * (same argv, same environment). So a background exec answers the moment the sandbox is set up
 * and the command is being exec'd, and a command that cannot start is still a failure, as
 * bubblewrap's own execvp failure is.
 */
export const READY_FD = 5;
const START_SHIM = `set -f
found=
case $1 in
  */*) [ -f "$1" ] && [ -x "$1" ] && found=1 ;;
  *) IFS=:; for dir in $PATH; do [ -f "\${dir:-.}/$1" ] && [ -x "\${dir:-.}/$1" ] && { found=1; break; }; done; unset IFS ;;
esac
if [ -z "$found" ]; then printf F >&${READY_FD}; exec ${READY_FD}>&-; printf 'execvp %s: No such file or directory\\n' "$1" >&2; exit 127; fi
printf R >&${READY_FD}; exec ${READY_FD}>&-
exec "$@"`;

/** argv wrapped in the start shim (see READY_FD). */
export function withStartSignal(argv: string[]): string[] {
  return ["/bin/sh", "-c", START_SHIM, "school-core-start", ...argv];
}
