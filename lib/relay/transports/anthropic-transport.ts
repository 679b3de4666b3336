/**
 * Anthropic messages (`POST <endpoint>` with `x-api-key` and `anthropic-version`). System messages
 * become the top-level `system` field, as the Messages API requires.
 */
import { z } from "zod";
import type { TRelayUpstreamSetting } from "../../contract/relay-upstream-setting";
import { postJson, readCredentialFile } from "./http-upstream";
import { upstreamFailure, type TRelayTransport } from "./transport";

type TAnthropicSetting = Extract<TRelayUpstreamSetting, { kind: "anthropic" }>;

const ZAnthropicResponseSchema = z.object({
  type: z.literal("message"),
  content: z.array(z.object({ type: z.string(), text: z.string().optional() })),
  usage: z.object({ input_tokens: z.number().int().nonnegative(), output_tokens: z.number().int().nonnegative() }).optional(),
});

/** `dataDir`: whose DATA_DIR/credentials/ the credential file must be in. */
export function createAnthropicTransport(setting: TAnthropicSetting, { dataDir }: { dataDir: string }): TRelayTransport {
  return {
    kind: "anthropic",
    async complete({ messages, maxTokens, signal }) {
      const credential = await readCredentialFile("anthropic", setting.credentialFile, dataDir);
      const system = messages
        .filter((m) => m.role === "system")
        .map((m) => m.content)
        .join("\n\n");
      const turns = messages.filter((m) => m.role !== "system").map((m) => ({ role: m.role, content: m.content }));
      const json = await postJson({
        kind: "anthropic",
        endpoint: setting.endpoint,
        headers: { "x-api-key": credential, "anthropic-version": setting.anthropicVersion },
        body: { model: setting.model, max_tokens: maxTokens ?? setting.defaultMaxTokens, ...(system ? { system } : {}), messages: turns },
        connectTimeoutMs: setting.connectTimeoutMs,
        requestTimeoutMs: setting.requestTimeoutMs,
        maxResponseBytes: setting.maxResponseBytes,
        signal,
      });
      const parsed = ZAnthropicResponseSchema.safeParse(json);
      if (!parsed.success) throw upstreamFailure("anthropic", "malformed_response");
      const texts = parsed.data.content
        .filter((block) => block.type === "text" && typeof block.text === "string")
        .map((block) => block.text!);
      // A reply with no text block is not an empty success: it is an answer we cannot use.
      if (texts.length === 0) throw upstreamFailure("anthropic", "malformed_response");
      return { content: texts.join(""), inputTokens: parsed.data.usage?.input_tokens, outputTokens: parsed.data.usage?.output_tokens };
    },
  };
}
