/**
 * The local substrate's extensions of the SmolCloud API, used by the adapter only where they are
 * served (issue 29): GET /v1/extensions is asked once; a substrate that answers it with a list
 * (the local substrate) gets the long poll POST /v1/machines/{id}/wait, and one that answers
 * anything else (the hosted API: 404) is never sent an extension route — the adapter keeps its
 * fixed-interval polling there. A transport failure decides nothing: the next call asks again.
 */
import { ZExtensionsSchema, ZWaitResponseSchema } from "../../contract/smolcloud-wire";
import { SubstrateError } from "../substrate-error";
import type { SmolCloudHttp } from "./http-client";
import type { z } from "zod";

/** The longest single wait the local substrate grants (machine-wait.ts MAX_WAIT_MS). */
export const MAX_WAIT_MS = 30_000;
/** how long past its own timeout a wait may take to answer before it counts as a failure */
const WAIT_GRACE_MS = 10_000;

export type TWaitAnswer = z.infer<typeof ZWaitResponseSchema>;

export class LocalExtensions {
  private served: Promise<ReadonlySet<string>> | undefined;

  constructor(
    private readonly http: SmolCloudHttp,
    private readonly controlMs: number,
  ) {}

  /** Whether this substrate serves the extension (asked once; a definite answer is kept). */
  async has(name: string): Promise<boolean> {
    this.served ??= this.ask();
    return (await this.served).has(name);
  }

  private async ask(): Promise<ReadonlySet<string>> {
    try {
      const result = await this.http.call({
        operation: "extensions",
        method: "GET",
        path: "/v1/extensions",
        timeoutMs: this.controlMs,
        maxResponseBytes: 4096,
      });
      const parsed = ZExtensionsSchema.safeParse(JSON.parse(result.body.toString("utf8")));
      return new Set(parsed.success ? parsed.data.extensions : []);
    } catch (error) {
      // The provider answered (404 and the like, or a body that is not ours): no extensions, for good.
      if (
        error instanceof SyntaxError ||
        (error instanceof SubstrateError && error.httpStatusFromProvider !== undefined)
      )
        return new Set();
      // No answer at all: nothing is decided; this call polls and the next one asks again.
      this.served = undefined;
      return new Set();
    }
  }

  /** The long poll; throws a SubstrateError like any other call (the caller then falls back to polling). */
  async wait(
    machineId: string,
    body: { untilReady?: boolean; files?: string[]; timeoutMs: number },
  ): Promise<TWaitAnswer> {
    const timeoutMs = Math.min(MAX_WAIT_MS, Math.max(0, Math.round(body.timeoutMs)));
    const result = await this.http.call({
      operation: "wait",
      method: "POST",
      path: `/v1/machines/${encodeURIComponent(machineId)}/wait`,
      json: { ...body, timeoutMs },
      timeoutMs: timeoutMs + WAIT_GRACE_MS,
      maxResponseBytes: 64 * 1024,
    });
    const parsed = ZWaitResponseSchema.safeParse(JSON.parse(result.body.toString("utf8")));
    if (!parsed.success)
      throw new SubstrateError({
        code: "SUBSTRATE_MALFORMED_RESPONSE",
        operation: "wait",
        message: "the wait answer breaks the local extension's contract",
        requestId: result.requestId,
      });
    return parsed.data;
  }
}
