/**
 * `POST /v1/machines/{id}/exec` on one started machine: the request is parsed with the local
 * bounds, the command runs in a fresh bubblewrap sandbox (seccomp-filtered, no nested user
 * namespaces) over the machine's image and roots, as
 * the machine's uid, inside its cgroup, under rlimits and a wall-clock timeout that kills the
 * whole process tree. A background command answers with its pid the moment it is known to be
 * starting (the start shim's signal, sandbox-args.ts: withStartSignal), with no fixed wait; a
 * sandbox that failed to start, a command that cannot be exec'd, a timeout or a kill is a vendor
 * error code, never a fake exit code.
 */
import path from "node:path";
import { logWarn } from "../../lib/log";
import { sanitizeExcerpt } from "../../lib/redact";
import type { TCgroupRoot } from "./cgroups";
import type { TClock } from "./clock";
import { guestRootDir } from "./guest-files";
import { SECCOMP_FD, spawnGuestProcess, type TGuestProcessResult } from "./guest-process";
import type { TMachine, TSubstrateLimits } from "./machine-record";
import { buildBwrapArgs, guestArgv, guestEnvironment, READY_FD, withStartSignal } from "./sandbox-args";
import { weakenBwrapArgs, type TWeakening } from "./weakening";
import { WireError } from "./wire-error";
import type { TLocalExecResponse } from "./wire-responses";
import { describeZodError, ZLocalExecRequestSchema, type TExecOutputMode } from "./wire-schemas";

/** `--disable-userns` where bubblewrap has it, and the compiled seccomp filter's file (seccomp-filter.ts). */
export type TExecHardening = { disableUserns: boolean; seccompFile: string };

export type TMachineExecContext = {
  limits: TSubstrateLimits;
  bwrapPath: string;
  cgroupRoot: TCgroupRoot;
  clock: TClock;
  hardening: TExecHardening;
  weakening?: TWeakening;
};

export async function execOnMachine(
  context: TMachineExecContext,
  machine: TMachine,
  body: unknown,
  outputMode: TExecOutputMode,
): Promise<TLocalExecResponse> {
  const parsed = ZLocalExecRequestSchema.safeParse(body);
  if (!parsed.success) throw new WireError("BAD_REQUEST", describeZodError(parsed.error));
  const request = parsed.data;
  if (request.stream) throw new WireError("BAD_REQUEST", "streaming exec is not supported by the local substrate");
  if (machine.state !== "started" || !machine.image)
    throw new WireError("CONFLICT", `machine ${machine.id} is not started (state: ${machine.state})`);
  const { limits, cgroupRoot } = context;
  if (machine.processes.size >= limits.maxConcurrentExecsPerMachine)
    throw new WireError("UNAVAILABLE", "too many commands are running on this machine");
  const timeoutSeconds = Math.min(
    limits.maxExecTimeoutSeconds,
    request.timeoutSeconds || limits.defaultExecTimeoutSeconds,
  );
  const bwrapArgs = weakenBwrapArgs(
    buildBwrapArgs({
      imageRootDir: machine.image.rootDir,
      manifest: machine.image.manifest,
      tmpDir: guestRootDir(machine.dir, "tmp"),
      workspaceDir: guestRootDir(machine.dir, "workspace"),
      relayDir: machine.relay ? path.dirname(machine.relay.socketPath) : undefined,
      env: guestEnvironment(machine.env, request.env),
      cwd: request.cwd ?? machine.workdir ?? "/workspace",
      argv: request.background ? withStartSignal(guestArgv(request.command)) : guestArgv(request.command),
      hardening: { disableUserns: context.hardening.disableUserns, seccompFd: SECCOMP_FD },
    }),
    context.weakening,
  );
  const memoryBytes = machine.resources.memoryMb * 1024 * 1024;
  const guest = spawnGuestProcess({
    bwrapPath: context.bwrapPath,
    bwrapArgs,
    hostUid: machine.hostUid,
    cgroupProcs: machine.cgroup?.procsFiles ?? { pids: undefined, memory: undefined },
    seccompFile: context.hardening.seccompFile,
    rlimits: {
      // With a pids cgroup the cgroup is the binding limit; RLIMIT_NPROC (per machine uid) is the
      // looser backstop, and the only one when no pids controller is writable.
      maxProcesses: cgroupRoot.pids ? machine.resources.maxProcesses * 2 : machine.resources.maxProcesses,
      openFiles: limits.openFiles,
      fileSizeBytes: Math.min(limits.fileSizeBytes, machine.resources.diskGb * 1024 ** 3),
      ...(cgroupRoot.memory ? {} : { dataBytes: memoryBytes }),
    },
    stdin: request.stdin ?? undefined,
    captureBytes: limits.execOutputBytes,
    timeoutMs: timeoutSeconds * 1000,
    readyFd: request.background ? READY_FD : undefined,
  });
  machine.processes.add(guest);
  machine.execCount += 1;
  machine.lastActivityAtMs = context.clock.now();
  void guest.done.then(() => machine.processes.delete(guest));

  if (request.background) {
    const pid = await guest.started;
    // Set-up failures (a bad cwd, a mount) end the sandbox before the shim runs; a missing command
    // is the shim's `F`: both settle `ready` as not started, and the result says why.
    if ((await guest.ready) !== "running" || pid === undefined)
      throwForStart(machine, await guest.done, timeoutSeconds);
    return {
      stdout: "",
      stderr: "",
      exitCode: 0,
      durationMs: 0,
      machineId: machine.id,
      stdoutTruncated: false,
      stderrTruncated: false,
      pid,
      background: true,
    };
  }
  const result = await guest.done;
  if (result.kind !== "exited") throwForResult(machine, result, timeoutSeconds);
  const response: TLocalExecResponse = {
    stdout: outputMode === "b64" ? "" : result.stdout.bytes.toString("utf8"),
    stderr: outputMode === "b64" ? "" : result.stderr.bytes.toString("utf8"),
    exitCode: result.exitCode,
    durationMs: result.durationMs,
    machineId: machine.id,
    stdoutTruncated: result.stdout.isTruncated,
    stderrTruncated: result.stderr.isTruncated,
  };
  if (outputMode !== "text") {
    response.stdoutB64 = result.stdout.bytes.toString("base64");
    response.stderrB64 = result.stderr.bytes.toString("base64");
  }
  return response;
}

/** A background command that never got to run: its sandbox's failure, or the shim's "no such command". */
function throwForStart(machine: TMachine, result: TGuestProcessResult, timeoutSeconds: number): never {
  if (result.kind === "exited")
    throwForResult(
      machine,
      { kind: "sandbox_failed", message: result.stderr.bytes.toString("utf8").trim(), durationMs: result.durationMs },
      timeoutSeconds,
    );
  throwForResult(machine, result, timeoutSeconds);
}

/** A command that did not exit on its own, as the vendor's error codes. */
function throwForResult(machine: TMachine, result: TGuestProcessResult, timeoutSeconds: number): never {
  if (result.kind === "killed") {
    if (result.reason === "timeout")
      throw new WireError("TIMEOUT", `command timed out after ${timeoutSeconds}s; its whole process tree was killed`);
    if (result.reason === "shutdown") throw new WireError("UNAVAILABLE", "the local substrate is shutting down");
    throw new WireError("CONFLICT", `machine ${machine.id} was ${result.reason} while the command ran`);
  }
  if (result.kind === "sandbox_failed") {
    const message = sanitizeExcerpt(result.message, 1024);
    if (/^bwrap: Can't chdir/m.test(message)) throw new WireError("BAD_REQUEST", message.replace(/^bwrap: /, ""));
    logWarn("local substrate: sandbox failed to start", { machineId: machine.id, detail: message });
    throw new WireError("INTERNAL_ERROR", `sandbox failed to start: ${message}`);
  }
  throw new WireError("INTERNAL_ERROR", "unexpected command result");
}
