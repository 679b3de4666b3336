/**
 * One upstream call for a relay operation (`complete` or `chat`, issue 25). The output-token bound
 * is always sent as the call's max_tokens — the relay's default when the caller named none — so the
 * worst case admission reserved holds whatever the upstream setting's own default is.
 */
import type { TChatAnswer, TChatRequest } from "./chat-request";
import { RELAY_DEFAULT_MAX_TOKENS } from "./limits";
import type { TCompleteRequest } from "./relay-request";
import type { TRelayTransport } from "./transports/transport";

export type TValidRequest = TCompleteRequest | TChatRequest;

export type TAnswer = {
  payload: { completion: { content: string } } | { chat: TChatAnswer };
  inputTokens?: number;
  outputTokens?: number;
};

/** The output-token bound of a call: what it names, or the relay's default — sent upstream as max_tokens either way. */
export function outputBoundOf(request: TValidRequest): number {
  return request.maxTokens ?? RELAY_DEFAULT_MAX_TOKENS;
}

export async function askTransport(
  transport: TRelayTransport,
  operation: string,
  request: TValidRequest,
  maxTokens: number,
): Promise<TAnswer> {
  if (operation === "chat") {
    const { inputTokens, outputTokens, ...chat } = await transport.chat({
      request: { ...(request as TChatRequest), maxTokens },
    });
    return { payload: { chat }, inputTokens, outputTokens };
  }
  const { content, inputTokens, outputTokens } = await transport.complete({
    messages: (request as TCompleteRequest).messages,
    maxTokens,
  });
  return { payload: { completion: { content } }, inputTokens, outputTokens };
}
