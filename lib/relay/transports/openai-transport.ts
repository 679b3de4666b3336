/**
 * OpenAI-compatible chat completions (`POST <endpoint>` with `Authorization: Bearer`), non-streaming
 * JSON read through the bounded reader. The endpoint and model come from the operator setting only.
 */
import { z } from "zod";
import type { TRelayUpstreamSetting } from "../../contract/relay-upstream-setting";
import { postJson, readCredentialFile } from "./http-upstream";
import { upstreamFailure, type TRelayTransport } from "./transport";

type TOpenAiSetting = Extract<TRelayUpstreamSetting, { kind: "openai" }>;

/** Only what we use is validated; upstreams add fields freely, so this one is not strict. */
const ZOpenAiResponseSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1),
  usage: z.object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }).optional(),
});

/** `dataDir`: whose DATA_DIR/credentials/ the credential file must be in. */
export function createOpenAiTransport(setting: TOpenAiSetting, { dataDir }: { dataDir: string }): TRelayTransport {
  return {
    kind: "openai",
    async complete({ messages, maxTokens, signal }) {
      const credential = await readCredentialFile("openai", setting.credentialFile, dataDir);
      const json = await postJson({
        kind: "openai",
        endpoint: setting.endpoint,
        headers: { authorization: `Bearer ${credential}` },
        body: {
          model: setting.model,
          messages: messages.map((m) => ({ role: m.role, content: m.content })),
          max_tokens: maxTokens ?? setting.defaultMaxTokens,
          stream: false,
        },
        connectTimeoutMs: setting.connectTimeoutMs,
        requestTimeoutMs: setting.requestTimeoutMs,
        maxResponseBytes: setting.maxResponseBytes,
        signal,
      });
      const parsed = ZOpenAiResponseSchema.safeParse(json);
      if (!parsed.success) throw upstreamFailure("openai", "malformed_response");
      return {
        content: parsed.data.choices[0]!.message.content,
        inputTokens: parsed.data.usage?.prompt_tokens,
        outputTokens: parsed.data.usage?.completion_tokens,
      };
    },
  };
}
