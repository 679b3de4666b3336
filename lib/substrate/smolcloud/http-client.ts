/**
 * HTTP to SmolCloud: one keep-alive undici Pool per base URL, a deadline on every call (headers,
 * body and an overall abort), bodies read with a byte cap, and every failure turned into a
 * SubstrateError with the provider's status, request id and a bounded, sanitized excerpt.
 * The bearer token is read from its file at each call — never at import, never logged.
 */
import { createWriteStream } from "node:fs";
import fs from "node:fs/promises";
import { createHash } from "node:crypto";
import { Pool, errors as undiciErrors, type Dispatcher } from "undici";
import { SubstrateError, substrateCodeForStatus } from "../substrate-error";
import { readBodyCapped } from "../../http/read-body-capped";

export type HttpCallOptions = {
  operation: string;
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  query?: Record<string, string>;
  json?: unknown;
  body?: Buffer;
  timeoutMs: number;
  maxResponseBytes: number;
};

export type HttpResult = {
  status: number;
  requestId: string | undefined;
  body: Buffer;
  contentType: string | undefined;
};

const MAX_ERROR_BODY_READ = 64 * 1024;

export class SmolCloudHttp {
  private readonly pool: Pool;
  private readonly origin: string;
  private readonly basePath: string;

  constructor(
    baseUrl: string,
    private readonly tokenFile: string,
  ) {
    const url = new URL(baseUrl);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/$/, "");
    this.pool = new Pool(this.origin, { connections: 16, keepAliveTimeout: 10_000, pipelining: 1 });
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private async readToken(operation: string): Promise<string> {
    let token: string;
    try {
      token = (await fs.readFile(this.tokenFile, "utf8")).trim();
    } catch {
      throw new SubstrateError({
        code: "SUBSTRATE_CREDENTIAL_MISSING",
        operation,
        message: `the SmolCloud token file cannot be read (${this.tokenFile})`,
      });
    }
    if (token.length < 8 || /[\s\u0000-\u001f\u007f]/.test(token)) {
      throw new SubstrateError({
        code: "SUBSTRATE_CREDENTIAL_MISSING",
        operation,
        message: "the SmolCloud token file does not hold a usable token",
      });
    }
    return token;
  }

  private buildPath(options: HttpCallOptions): string {
    const query = options.query ? `?${new URLSearchParams(options.query).toString()}` : "";
    return `${this.basePath}${options.path}${query}`;
  }

  /** Sends a request; returns the status and the raw (capped) body. Non-2xx is NOT an error here. */
  private async send(options: HttpCallOptions, token: string): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: "application/json" };
    let body: Buffer | string | undefined;
    if (options.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.json);
    } else if (options.body) {
      headers["content-type"] = "application/octet-stream";
      body = options.body;
    }
    try {
      return await this.pool.request({
        method: options.method,
        path: this.buildPath(options),
        headers,
        body,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      throw this.transportError(options.operation, error, token);
    }
  }

  private transportError(operation: string, error: unknown, token: string): SubstrateError {
    const isTimeout =
      error instanceof undiciErrors.HeadersTimeoutError ||
      error instanceof undiciErrors.BodyTimeoutError ||
      (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError"));
    const message = error instanceof Error ? error.message : String(error);
    return new SubstrateError({
      code: isTimeout ? "SUBSTRATE_TIMEOUT" : "SUBSTRATE_NETWORK",
      operation,
      message: isTimeout ? "no answer before the deadline" : `connection failed: ${message}`,
      secrets: [token],
    });
  }

  private async readCapped(
    response: Dispatcher.ResponseData,
    cap: number,
    operation: string,
    token: string,
  ): Promise<Buffer | "too_large"> {
    try {
      return await readBodyCapped(response.body, cap);
    } catch (error) {
      throw this.transportError(operation, error, token);
    }
  }

  private requestIdOf(response: Dispatcher.ResponseData): string | undefined {
    const value = response.headers["x-request-id"];
    return typeof value === "string" ? value : Array.isArray(value) ? value[0] : undefined;
  }

  /** A call whose 2xx body is read in full (capped). Non-2xx becomes a SubstrateError. */
  async call(options: HttpCallOptions): Promise<HttpResult> {
    const token = await this.readToken(options.operation);
    const response = await this.send(options, token);
    const requestId = this.requestIdOf(response);
    const isOk = response.statusCode >= 200 && response.statusCode < 300;
    const body = await this.readCapped(
      response,
      isOk ? options.maxResponseBytes : MAX_ERROR_BODY_READ,
      options.operation,
      token,
    );
    if (!isOk)
      throw this.statusError(
        options.operation,
        response.statusCode,
        requestId,
        body === "too_large" ? "(error body larger than 64 KiB)" : body.toString("utf8"),
        token,
      );
    if (body === "too_large") {
      throw new SubstrateError({
        code: "SUBSTRATE_RESPONSE_TOO_LARGE",
        operation: options.operation,
        message: `the answer exceeds ${options.maxResponseBytes} bytes`,
        status: response.statusCode,
        requestId,
      });
    }
    const contentType = response.headers["content-type"];
    return {
      status: response.statusCode,
      requestId,
      body,
      contentType: typeof contentType === "string" ? contentType : undefined,
    };
  }

  /** Streams a 2xx body to a file with a byte cap; the partial file is removed on any failure. */
  async download(options: HttpCallOptions, hostPath: string): Promise<{ bytes: number; sha256: string } | "not_found"> {
    const token = await this.readToken(options.operation);
    const response = await this.send(options, token);
    const requestId = this.requestIdOf(response);
    if (response.statusCode === 404) {
      await response.body.dump().catch(() => undefined);
      return "not_found";
    }
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const body = await this.readCapped(response, MAX_ERROR_BODY_READ, options.operation, token);
      throw this.statusError(
        options.operation,
        response.statusCode,
        requestId,
        body === "too_large" ? "(error body larger than 64 KiB)" : body.toString("utf8"),
        token,
      );
    }
    if (!isOctetStream(response.headers["content-type"])) {
      response.body.destroy();
      throw new SubstrateError({
        code: "SUBSTRATE_MALFORMED_RESPONSE",
        operation: options.operation,
        message: "a file download must be application/octet-stream",
        status: response.statusCode,
        requestId,
      });
    }
    const declared = Number(response.headers["content-length"]);
    if (Number.isFinite(declared) && declared > options.maxResponseBytes) {
      response.body.destroy();
      throw new SubstrateError({
        code: "SUBSTRATE_RESPONSE_TOO_LARGE",
        operation: options.operation,
        message: `the file is ${declared} bytes, over the ${options.maxResponseBytes}-byte limit`,
        status: response.statusCode,
        requestId,
      });
    }
    const hash = createHash("sha256");
    const out = createWriteStream(hostPath, { flags: "wx", mode: 0o600 });
    // A write still in flight when the stream is destroyed reports ERR_STREAM_DESTROYED as an
    // 'error' event later; without a listener that becomes an uncaught exception in the process.
    let writeError: Error | undefined;
    out.on("error", (error) => (writeError ??= error));
    const drainedOrFailed = () =>
      new Promise<void>((resolve, reject) => {
        const onDrain = () => {
          out.off("close", onClose);
          resolve();
        };
        const onClose = () => {
          out.off("drain", onDrain);
          reject(writeError ?? new Error("the download file closed before the write finished"));
        };
        out.once("drain", onDrain);
        out.once("close", onClose);
      });
    let bytes = 0;
    try {
      for await (const chunk of response.body) {
        bytes += (chunk as Buffer).length;
        if (bytes > options.maxResponseBytes) {
          response.body.destroy();
          throw new SubstrateError({
            code: "SUBSTRATE_RESPONSE_TOO_LARGE",
            operation: options.operation,
            message: `the file exceeds the ${options.maxResponseBytes}-byte limit`,
            status: response.statusCode,
            requestId,
          });
        }
        hash.update(chunk as Buffer);
        if (writeError) throw writeError;
        if (!out.write(chunk)) await drainedOrFailed();
      }
      await new Promise<void>((resolve, reject) =>
        out.end((error?: Error | null) => (error ? reject(error) : resolve())),
      );
      return { bytes, sha256: hash.digest("hex") };
    } catch (error) {
      if (!out.closed) {
        const closed = new Promise<void>((resolve) => out.once("close", () => resolve()));
        out.destroy();
        await closed;
      }
      await fs.rm(hostPath, { force: true });
      if (error instanceof SubstrateError) throw error;
      throw this.transportError(options.operation, error, token);
    }
  }

  private statusError(
    operation: string,
    status: number,
    requestId: string | undefined,
    body: string,
    token: string,
  ): SubstrateError {
    // The body is the provider's explanation (JSON envelope or plain text); it is kept, bounded
    // and sanitized, in the error itself.
    return new SubstrateError({
      code: substrateCodeForStatus(status),
      operation,
      message: "the provider refused the request",
      status,
      requestId,
      body,
      secrets: [token],
    });
  }
}

export function isOctetStream(contentType: unknown): boolean {
  return (
    typeof contentType === "string" && contentType.split(";")[0]!.trim().toLowerCase() === "application/octet-stream"
  );
}
