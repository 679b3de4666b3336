/**
 * The relay's answers, the same for both channels: 200 with the completion, or a 4xx/5xx with
 * `{ error: { code, message } }`. Messages are bounded (AppError) and never carry the handle,
 * the credential, the endpoint or any payload.
 */
import { APP_ERROR_CODES, AppError, type AppErrorCode } from "../errors";
import type { TTransportKind } from "../contract/relay-upstream-setting";
import type { TChatAnswer } from "./chat-request";

export type TRelayUsage = {
  requestBytes: number;
  responseBytes: number;
  requestCount: number;
  maxRequests: number;
  bytesUsed: number;
  maxBytes: number;
  /** Which upstream answered; `scripted` is canned text, not a model. */
  upstream: TTransportKind;
  /** What the upstream reported for this call (absent = not reported; the call was charged its worst case). */
  inputTokens?: number;
  outputTokens?: number;
  /** The capability's token budget after this call, and what this call cost (micro-dollars). */
  tokensUsed: number;
  maxTokens: number;
  costMicros: number;
};

/** `complete` answers `completion`, `chat` answers `chat`. */
export type TRelaySuccessBody = ({ completion: { content: string } } | { chat: TChatAnswer }) & { usage: TRelayUsage };
export type TRelayErrorBody = { error: { code: AppErrorCode; message: string } };

export type TRelayCallResult =
  { status: 200; body: TRelaySuccessBody; code: null } | { status: number; body: TRelayErrorBody; code: AppErrorCode };

export function refusalResult(code: AppErrorCode, message: string): TRelayCallResult {
  const error = new AppError(code, message);
  return { status: APP_ERROR_CODES[code], body: { error: { code, message: error.message } }, code };
}
