/**
 * The relay page's "test call": one real completion through the operator-pinned upstream, with
 * its latency and — when it fails — the failure as the operator may see it (kind, reason, HTTP
 * status). The prompt is fixed and tiny; nothing a task sends is involved. The credential is read
 * by the transport from its file and never leaves it. Audited (who tested which upstream when).
 */
import { recordAudit } from "../audit";
import { actorIdOf, type Actor } from "../contract/actor";
import type { Db } from "../db/client";
import { isAppError } from "../errors";
import { sanitizeExcerpt } from "../redact";
import { loadRelayTransport } from "./transports/load-transport";

const TEST_TIMEOUT_MS = 30_000;

export type TUpstreamTestResult =
  | { isOk: true; kind: string; latencyMs: number; excerpt: string }
  | { isOk: false; kind: string; latencyMs: number; error: string; status: number | null };

export async function testRelayUpstream(
  deps: { db: Db; dataDir?: string },
  input: { actor: Actor | null },
): Promise<TUpstreamTestResult> {
  const started = performance.now();
  let kind = "unknown";
  let result: TUpstreamTestResult;
  try {
    const transport = await loadRelayTransport(deps);
    kind = transport.kind;
    const output = await transport.complete({
      messages: [{ role: "user", content: "Reply with the single word: ok" }],
      maxTokens: 8,
      signal: AbortSignal.timeout(TEST_TIMEOUT_MS),
    });
    result = {
      isOk: true,
      kind,
      latencyMs: Math.round(performance.now() - started),
      excerpt: sanitizeExcerpt(output.content, 200),
    };
  } catch (error) {
    const details = isAppError(error) ? (error.details as { status?: number } | undefined) : undefined;
    result = {
      isOk: false,
      kind,
      latencyMs: Math.round(performance.now() - started),
      error: isAppError(error) ? error.message : "The call failed unexpectedly (details in the server log).",
      status: details?.status ?? null,
    };
  }
  await recordAudit(deps.db, {
    actorId: actorIdOf(input.actor),
    action: "relay.test_call",
    targetType: "setting",
    targetId: "relay.upstream",
    detail: {
      kind,
      isOk: result.isOk,
      latencyMs: result.latencyMs,
      ...(result.isOk ? {} : { error: result.error.slice(0, 300) }),
    },
  });
  return result;
}
