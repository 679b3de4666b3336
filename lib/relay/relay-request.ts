/**
 * The relay's request surface, the same for both channels. Strict everywhere: the guest is hostile,
 * and an unknown key (url, endpoint, method, headers, model …) must be an error, never ignored —
 * the upstream endpoint, model and credential are operator-pinned inside the transport.
 */
import { z } from "zod";
import { sanitizeExcerpt } from "../redact";
import { ZChatRequestSchema } from "./chat-request";
import { RELAY_MAX_MESSAGES, RELAY_MAX_REQUEST_BYTES_CEILING, RELAY_MAX_TOKENS_CEILING } from "./limits";

export const ZRelayMessageSchema = z
  .object({
    role: z.enum(["system", "user", "assistant"]),
    content: z.string().max(RELAY_MAX_REQUEST_BYTES_CEILING),
  })
  .strict();

/** `complete`: a chat conversation and an optional output-token bound. */
export const ZCompleteRequestSchema = z
  .object({
    messages: z.array(ZRelayMessageSchema).min(1).max(RELAY_MAX_MESSAGES),
    maxTokens: z.number().int().min(1).max(RELAY_MAX_TOKENS_CEILING).optional(),
  })
  .strict();

export type TRelayMessage = z.infer<typeof ZRelayMessageSchema>;
export type TCompleteRequest = z.infer<typeof ZCompleteRequestSchema>;

/** The HTTP body: the task the call belongs to and the operation's request. The handle travels in Authorization. */
export const ZRelayHttpBodySchema = z
  .object({
    taskId: z.string().max(64),
    request: z.unknown(),
  })
  .strict();

export const ZTaskIdSchema = z.uuid();

/** One schema per operation; relayCall parses with the one for the named operation. */
export const RELAY_REQUEST_SCHEMAS = {
  complete: ZCompleteRequestSchema,
  chat: ZChatRequestSchema,
} as const;

/** A bounded, payload-free description of why a request failed its schema (paths and messages only, never values). */
export function describeSchemaError(error: z.ZodError): string {
  const text = error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
    .join("; ");
  // Key names in an "unrecognized key" message are the caller's text: bounded and scrubbed.
  return sanitizeExcerpt(text, 512);
}
