/**
 * The relay's answers, the same for both channels: 200 with the completion, or a 4xx/5xx with
 * `{ error: { code, message } }`. Messages are bounded (AppError) and never carry the handle,
 * the credential, the endpoint or any payload.
 */
import { APP_ERROR_CODES, AppError, type AppErrorCode } from "../errors";
import type { TTransportKind } from "../contract/relay-upstream-setting";

export type TRelayUsage = {
  requestBytes: number;
  responseBytes: number;
  requestCount: number;
  maxRequests: number;
  bytesUsed: number;
  maxBytes: number;
  /** Which upstream answered; `scripted` is canned text, not a model. */
  upstream: TTransportKind;
  inputTokens?: number;
  outputTokens?: number;
};

export type TRelaySuccessBody = { completion: { content: string }; usage: TRelayUsage };
export type TRelayErrorBody = { error: { code: AppErrorCode; message: string } };

export type TRelayCallResult =
  { status: 200; body: TRelaySuccessBody; code: null } | { status: number; body: TRelayErrorBody; code: AppErrorCode };

export function refusalResult(code: AppErrorCode, message: string): TRelayCallResult {
  const error = new AppError(code, message);
  return { status: APP_ERROR_CODES[code], body: { error: { code, message: error.message } }, code };
}
