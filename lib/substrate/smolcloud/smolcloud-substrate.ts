/**
 * The SmolCloud adapter: the Substrate interface over the smolfleet REST API. The same adapter
 * talks to the hosted cloud and to the local substrate (which serves the same contract).
 *
 * Seed findings enforced here, before any request where they can be:
 *  A. a registry `image` source with a blocked network cannot start: refused with the fix.
 *  B. provider error bodies are kept (bounded, sanitized) in every SubstrateError.
 * Findings C and D (spend ceiling, account headroom) are the spend guard's: lib/spend wraps any
 * Substrate; this adapter knows nothing of money.
 */
import { AppError } from "../../errors";
import type { Substrate, TExecRequest, TExecResult, TMachineSpec } from "../substrate";
import { SubstrateError } from "../substrate-error";
import { isOctetStream, SmolCloudHttp } from "./http-client";
import { LocalExtensions } from "./local-extensions";
import {
  ZAccountSchema,
  ZExecResponseSchema,
  ZMachineInfoSchema,
  ZMachineListSchema,
  ZUploadResponseSchema,
  ZUsageReportSchema,
  type TAccount,
  type TMachineInfo,
} from "../../contract/smolcloud-wire";
import type { z } from "zod";

export type SmolCloudOptions = {
  baseUrl: string;
  tokenFile: string;
  label?: string;
  timeouts?: Partial<typeof DEFAULT_TIMEOUTS>;
};

const DEFAULT_TIMEOUTS = { controlMs: 15_000, execGraceMs: 15_000, transferMs: 120_000 };
const MAX_JSON_BYTES = 256 * 1024;
/** the provider caps text output at 1 MiB per stream; JSON escaping can double it */
const MAX_EXEC_RESPONSE_BYTES = 5 * 1024 * 1024;
const TERMINAL_WHILE_WAITING = new Set(["error", "stopped", "deleted"]);

function encodeGuestPath(guestPath: string): string {
  if (!guestPath.startsWith("/") || guestPath.split("/").some((s) => s === "..") || guestPath.includes("\0")) {
    throw new AppError("VALIDATION_FAILED", `Guest path must be absolute and plain: ${guestPath.slice(0, 200)}`);
  }
  return guestPath.split("/").filter(Boolean).map(encodeURIComponent).join("/");
}

function parseWire<T extends z.ZodType>(
  schema: T,
  body: Buffer,
  operation: string,
  requestId: string | undefined,
): z.infer<T> {
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    throw new SubstrateError({
      code: "SUBSTRATE_MALFORMED_RESPONSE",
      operation,
      message: "the answer is not JSON",
      requestId,
      body: body.subarray(0, 4096).toString("utf8"),
    });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SubstrateError({
      code: "SUBSTRATE_MALFORMED_RESPONSE",
      operation,
      message: `the answer breaks the contract at ${issue.path.join(".") || "(root)"}: ${issue.message}`,
      requestId,
      body: body.subarray(0, 4096).toString("utf8"),
    });
  }
  return parsed.data;
}

/** Finding A, refused before any request: the provider pulls a registry image at start, which a blocked network forbids. */
export function assertStartableSource(spec: Pick<TMachineSpec, "source" | "network">): void {
  if (spec.source.type === "image" && spec.network.mode === "blocked") {
    throw new SubstrateError({
      code: "SUBSTRATE_CONFIG_REFUSED",
      operation: "create",
      message:
        `a registry image (${spec.source.reference}) must be pulled at start, but the network is blocked, so the pull can never succeed. ` +
        "Preload the image as a tenant smolmachine (docker save <image> | smolvm machine create --image -) and set the guest image to that smolmachine; keep the network blocked.",
    });
  }
  if (spec.source.type === "image" && !/@sha256:[a-f0-9]{64}$/.test(spec.source.reference)) {
    throw new SubstrateError({
      code: "SUBSTRATE_CONFIG_REFUSED",
      operation: "create",
      message: `a registry image must be pinned by digest (name@sha256:…), got ${spec.source.reference}`,
    });
  }
}

/** The machine if it is ready; a failure if it can no longer become ready or this was the last look; else undefined. */
function judgeWhileWaiting(
  info: TMachineInfo | undefined,
  options: { isLastLook: boolean; timeoutMs: number },
): TMachineInfo | undefined {
  if (!info)
    throw new SubstrateError({
      code: "SUBSTRATE_MACHINE_FAILED",
      operation: "waitReady",
      message: "the machine disappeared while starting",
    });
  if (info.ready) return info;
  if (TERMINAL_WHILE_WAITING.has(info.state))
    throw new SubstrateError({
      code: "SUBSTRATE_MACHINE_FAILED",
      operation: "waitReady",
      message: `the machine is ${info.state}${info.error ? `: ${info.error}` : ""}`,
    });
  if (options.isLastLook)
    throw new SubstrateError({
      code: "SUBSTRATE_NOT_READY",
      operation: "waitReady",
      message: `not ready after ${Math.round(options.timeoutMs / 1000)} s (state ${info.state})`,
    });
  return undefined;
}

export class SmolCloudSubstrate implements Substrate {
  readonly label: string;
  private readonly http: SmolCloudHttp;
  private readonly timeouts: typeof DEFAULT_TIMEOUTS;
  /** the local substrate's long poll, where it is served (local-extensions.ts) */
  private readonly extensions: LocalExtensions;

  constructor(private readonly options: SmolCloudOptions) {
    this.label = options.label ?? "smolcloud";
    this.http = new SmolCloudHttp(options.baseUrl, options.tokenFile);
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
    this.extensions = new LocalExtensions(this.http, this.timeouts.controlMs);
  }

  async close(): Promise<void> {
    await this.http.close();
  }

  async account(): Promise<TAccount> {
    const result = await this.http.call({
      operation: "account",
      method: "GET",
      path: "/v1/account",
      timeoutMs: this.timeouts.controlMs,
      maxResponseBytes: MAX_JSON_BYTES,
    });
    return parseWire(ZAccountSchema, result.body, "account", result.requestId);
  }

  assertCreatable(spec: TMachineSpec): void {
    assertStartableSource(spec);
    // A short TTL would kill a task's guest mid-run; only probe P6, which watches the sweep, may ask for one.
    const minTtl = spec.isTtlProbe ? 3 : 60;
    if (!Number.isInteger(spec.ttlSeconds) || spec.ttlSeconds < minTtl)
      throw new AppError("VALIDATION_FAILED", `ttlSeconds must be an integer ≥ ${minTtl}`);
  }

  async create(spec: TMachineSpec): Promise<TMachineInfo> {
    this.assertCreatable(spec);

    const result = await this.http.call({
      operation: "create",
      method: "POST",
      path: "/v1/machines",
      json: {
        name: spec.name,
        source: spec.source,
        resources:
          this.label === "local"
            ? spec.resources
            : { cpus: spec.resources.cpus, memoryMb: spec.resources.memoryMb, diskGb: spec.resources.diskGb },
        // Always explicit: vendor sources disagree on the default (docs: blocked, OpenAPI: open).
        network: spec.network,
        env: spec.env ?? {},
        ttlSeconds: spec.ttlSeconds,
        ephemeral: true,
      },
      timeoutMs: this.timeouts.controlMs,
      maxResponseBytes: MAX_JSON_BYTES,
    });
    return parseWire(ZMachineInfoSchema, result.body, "create", result.requestId);
  }

  async start(machineId: string): Promise<TMachineInfo> {
    const result = await this.http.call({
      operation: "start",
      method: "POST",
      path: `/v1/machines/${encodeURIComponent(machineId)}/start`,
      timeoutMs: this.timeouts.controlMs,
      maxResponseBytes: MAX_JSON_BYTES,
    });
    return parseWire(ZMachineInfoSchema, result.body, "start", result.requestId);
  }

  async get(machineId: string): Promise<TMachineInfo | undefined> {
    try {
      const result = await this.http.call({
        operation: "get",
        method: "GET",
        path: `/v1/machines/${encodeURIComponent(machineId)}`,
        timeoutMs: this.timeouts.controlMs,
        maxResponseBytes: MAX_JSON_BYTES,
      });
      return parseWire(ZMachineInfoSchema, result.body, "get", result.requestId);
    } catch (error) {
      if (error instanceof SubstrateError && error.substrateCode === "SUBSTRATE_NOT_FOUND") return undefined;
      throw error;
    }
  }

  async listMachines(): Promise<TMachineInfo[]> {
    const result = await this.http.call({
      operation: "list",
      method: "GET",
      path: "/v1/machines",
      timeoutMs: this.timeouts.controlMs,
      maxResponseBytes: 8 * 1024 * 1024,
    });
    return parseWire(ZMachineListSchema, result.body, "list", result.requestId);
  }

  async findByName(name: string): Promise<TMachineInfo | undefined> {
    const machines = await this.listMachines();
    const matches = machines.filter((m) => m.name === name && m.state !== "deleted");
    if (matches.length > 1)
      throw new SubstrateError({
        code: "SUBSTRATE_CONFLICT",
        operation: "list",
        message: `${matches.length} machines are named ${name}`,
      });
    return matches[0];
  }

  /**
   * Until `ready` (not merely `started`); error/stopped/deleted while waiting fail with the
   * provider's reason. The local substrate's long poll answers the moment the machine is ready;
   * the hosted API is polled every `pollMs`, as its SDKs do — and so is the local one if its long
   * poll fails.
   */
  async waitReady(machineId: string, options: { timeoutMs: number; pollMs?: number }): Promise<TMachineInfo> {
    const deadline = Date.now() + options.timeoutMs;
    const pollMs = options.pollMs ?? 1000;
    if (await this.extensions.has("wait")) {
      const answered = await this.waitReadyLongPoll(machineId, deadline, options.timeoutMs).catch((error: unknown) => {
        if (error instanceof SubstrateError && error.operation === "waitReady") throw error;
        return undefined; // the long poll failed: poll below, which reports what really happened
      });
      if (answered) return answered;
    }
    while (true) {
      const info = await this.get(machineId);
      const ready = judgeWhileWaiting(info, {
        isLastLook: Date.now() + pollMs > deadline,
        timeoutMs: options.timeoutMs,
      });
      if (ready) return ready;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }

  private async waitReadyLongPoll(machineId: string, deadline: number, timeoutMs: number): Promise<TMachineInfo> {
    while (true) {
      const answer = await this.extensions.wait(machineId, {
        untilReady: true,
        timeoutMs: Math.max(0, deadline - Date.now()),
      });
      const ready = judgeWhileWaiting(answer.machine, { isLastLook: Date.now() >= deadline, timeoutMs });
      if (ready) return ready;
    }
  }

  async waitForFiles(
    machineId: string,
    guestPaths: string[],
    options: { timeoutMs: number; pollMs: number },
  ): Promise<void> {
    for (const guestPath of guestPaths) encodeGuestPath(guestPath);
    if (await this.extensions.has("wait")) {
      const answered = await this.extensions.wait(machineId, { files: guestPaths, timeoutMs: options.timeoutMs }).then(
        () => true,
        () => false, // the caller's next read finds out what is wrong; meanwhile it polls
      );
      if (answered) return;
    }
    await new Promise((r) => setTimeout(r, Math.max(0, Math.min(options.pollMs, options.timeoutMs))));
  }

  async upload(machineId: string, guestPath: string, bytes: Buffer): Promise<void> {
    const result = await this.http.call({
      operation: "upload",
      method: "PUT",
      path: `/v1/machines/${encodeURIComponent(machineId)}/files/${encodeGuestPath(guestPath)}`,
      body: bytes,
      timeoutMs: this.timeouts.transferMs,
      maxResponseBytes: MAX_JSON_BYTES,
    });
    const answer = parseWire(ZUploadResponseSchema, result.body, "upload", result.requestId);
    if (answer.size !== undefined && answer.size !== bytes.length) {
      throw new SubstrateError({
        code: "SUBSTRATE_MALFORMED_RESPONSE",
        operation: "upload",
        message: `the provider stored ${answer.size} bytes of ${bytes.length}`,
        requestId: result.requestId,
      });
    }
  }

  async exec(machineId: string, request: TExecRequest, options: { maxOutputBytes: number }): Promise<TExecResult> {
    const result = await this.http.call({
      operation: "exec",
      method: "POST",
      path: `/v1/machines/${encodeURIComponent(machineId)}/exec`,
      query: { output: "text" },
      json: {
        command: request.command,
        cwd: request.cwd,
        env: request.env ?? {},
        timeoutSeconds: request.timeoutSeconds,
        background: request.background ?? false,
      },
      timeoutMs: request.timeoutSeconds * 1000 + this.timeouts.execGraceMs,
      maxResponseBytes: MAX_EXEC_RESPONSE_BYTES,
    });
    const parsed = parseWire(ZExecResponseSchema, result.body, "exec", result.requestId);
    const stdoutBytes = Buffer.byteLength(parsed.stdout);
    const stderrBytes = Buffer.byteLength(parsed.stderr);
    // Output limits hold on every byte we keep, whatever the provider's own cap is.
    return {
      ...parsed,
      stdout:
        stdoutBytes > options.maxOutputBytes
          ? Buffer.from(parsed.stdout).subarray(0, options.maxOutputBytes).toString("utf8")
          : parsed.stdout,
      stderr:
        stderrBytes > options.maxOutputBytes
          ? Buffer.from(parsed.stderr).subarray(0, options.maxOutputBytes).toString("utf8")
          : parsed.stderr,
      stdoutTruncated: parsed.stdoutTruncated || stdoutBytes > options.maxOutputBytes,
      stderrTruncated: parsed.stderrTruncated || stderrBytes > options.maxOutputBytes,
      stdoutBytes,
      stderrBytes,
    };
  }

  async downloadToFile(
    machineId: string,
    guestPath: string,
    hostPath: string,
    options: { maxBytes: number },
  ): Promise<{ bytes: number; sha256: string }> {
    const result = await this.http.download(
      {
        operation: "download",
        method: "GET",
        path: `/v1/machines/${encodeURIComponent(machineId)}/files/${encodeGuestPath(guestPath)}`,
        timeoutMs: this.timeouts.transferMs,
        maxResponseBytes: options.maxBytes,
      },
      hostPath,
    );
    if (result === "not_found")
      throw new SubstrateError({
        code: "SUBSTRATE_NOT_FOUND",
        operation: "download",
        message: `${guestPath} does not exist in the guest`,
        status: 404,
      });
    return result;
  }

  async downloadSmall(
    machineId: string,
    guestPath: string,
    options: { maxBytes: number },
  ): Promise<Buffer | undefined> {
    try {
      const result = await this.http.call({
        operation: "download",
        method: "GET",
        path: `/v1/machines/${encodeURIComponent(machineId)}/files/${encodeGuestPath(guestPath)}`,
        timeoutMs: this.timeouts.controlMs,
        maxResponseBytes: options.maxBytes,
      });
      if (!isOctetStream(result.contentType)) {
        throw new SubstrateError({
          code: "SUBSTRATE_MALFORMED_RESPONSE",
          operation: "download",
          message: "a file download must be application/octet-stream",
          status: result.status,
          requestId: result.requestId,
        });
      }
      return result.body;
    } catch (error) {
      if (error instanceof SubstrateError && error.substrateCode === "SUBSTRATE_NOT_FOUND") return undefined;
      throw error;
    }
  }

  async destroy(
    machineId: string,
  ): Promise<{ kind: "deleted"; usage: z.infer<typeof ZUsageReportSchema> | undefined } | { kind: "absent" }> {
    try {
      const result = await this.http.call({
        operation: "delete",
        method: "DELETE",
        path: `/v1/machines/${encodeURIComponent(machineId)}`,
        query: { includeUsage: "true" },
        timeoutMs: this.timeouts.controlMs,
        maxResponseBytes: MAX_JSON_BYTES,
      });
      if (result.status === 204 || result.body.length === 0) return { kind: "deleted", usage: undefined };
      return { kind: "deleted", usage: parseWire(ZUsageReportSchema, result.body, "delete", result.requestId) };
    } catch (error) {
      // 404: the provider no longer knows this id. Only the caller can tell whether that proves
      // the machine it created is gone (it holds the id the provider gave it).
      if (error instanceof SubstrateError && error.substrateCode === "SUBSTRATE_NOT_FOUND") return { kind: "absent" };
      throw error;
    }
  }
}
